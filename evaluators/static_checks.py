"""Static anti-cheat checks on a candidate's source (docs/architecture.md §6), before any of it runs.

The candidate is untrusted, usually LLM-written code. These rules encode the contract: outside
``@triton.jit`` functions it may allocate outputs, take views and launch kernels, nothing else. Dynamic
checks (``guard.py``) back these up at run time; each catches what the other cannot see.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from evaluators.source_tree import parse_source

ALLOWED_IMPORTS = {"torch", "triton", "math", "typing", "functools", "itertools", "dataclasses",
                   "collections", "__future__", "operator", "enum"}
# ``os`` and ``sys`` may be imported, but only these attributes used: exiting the process is not cheating
# (the sandbox turns it into a ``crash``), whereas environment, files, processes and frames are off limits.
PROCESS_MODULES = {"os": {"_exit", "abort", "getpid", "cpu_count", "path"},
                   "sys": {"exit", "version_info", "maxsize", "float_info", "byteorder"}}
FORBIDDEN_TORCH_SUBMODULES = {"torch.ops", "torch.compile", "torch._dynamo", "torch._inductor", "torch.jit",
                              "torch.fx", "torch.backends", "torch.library", "torch.utils", "torch.autograd",
                              "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.graph", "torch.cuda.CUDAGraph",
                              "torch.cuda.Event", "torch.cuda.synchronize", "torch.cuda.set_stream",
                              "torch.cuda.ExternalStream", "torch._C", "torch.multiprocessing", "torch.hub",
                              "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft",
                              "torch.distributed", "torch.testing", "torch.overrides", "torch.func",
                              "torch.profiler"}
# torch.<name> calls allowed outside kernels: allocation, metadata, dtypes and context helpers.
ALLOWED_TORCH_CALLS = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "full", "full_like",
                       "device", "Size", "get_default_dtype", "is_tensor", "no_grad", "inference_mode",
                       "finfo", "iinfo", "is_floating_point", "promote_types", "result_type",
                       "cuda.current_device", "cuda.get_device_properties", "cuda.is_available",
                       "cuda.device_count", "cuda.get_device_capability", "cuda.device", "nn.Parameter",
                       "nn.Module", "nn.Conv1d", "nn.Conv2d", "nn.Linear", "nn.Embedding", "nn.LayerNorm",
                       "nn.RMSNorm", "nn.init.zeros_", "nn.init.ones_",
                       "randn", "rand", "randn_like", "rand_like"}  # random draws: see guard.RANDOM_OPS
STREAM_CALLS = {"torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.ExternalStream",
                "torch.cuda.graph", "torch.cuda.CUDAGraph"}
TIMER_CALLS = {"torch.cuda.Event", "torch.cuda.synchronize", "torch.cuda.Event.elapsed_time"}
TENSOR_FACTORIES = {"randn", "rand", "randint", "ones", "arange", "tensor", "as_tensor", "from_numpy"}
FORBIDDEN_BUILTINS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint",
                      "open", "input", "setattr", "delattr"}
INTROSPECTION_ATTRS = {"__globals__", "__builtins__", "__subclasses__", "__code__", "__closure__", "__dict__",
                       "f_back", "f_locals", "f_globals", "gi_frame", "tb_frame", "__import__", "__loader__",
                       "_getframe", "__self__", "__func__", "__bases__", "__mro__", "__reduce__", "__setattr__",
                       "__getattribute__", "__delattr__", "__class__", "__spec__", "__getattr__", "__base__",
                       "__reduce_ex__", "__init_subclass__", "__set_name__", "__wrapped__"}


@dataclass(frozen=True)
class Violation:
    code: str
    message: str
    line: int

    def __str__(self) -> str:
        return f"static check: {self.message} (line {self.line})"


def check_source(source: str) -> list[Violation]:
    """All violations of the candidate contract, in source order; an empty list means it may run."""
    try:
        tree = parse_source(source)
    except SyntaxError:
        return []  # reported as compile_error when the module is loaded
    checker = _Checker()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            (checker.kernels if any(_is_triton_jit(d) for d in stmt.decorator_list) else
             checker.module_functions).add(stmt.name)
    checker.visit(tree)
    if not checker.kernels:
        checker.add("no-kernel", "no @triton.jit kernel is defined", 1)
    return sorted(checker.violations, key=lambda v: v.line)


# Modules a candidate may reach through attribute chains (``torch.nn.functional`` only for ``F.pad``-free
# code: its calls are torch compute and are rejected by the call rule).
REACHABLE_MODULES = {"torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.cuda", "torch.nn.modules",
                     "triton", "triton.language", "triton.language.extra", "triton.language.extra.libdevice",
                     "triton.language.math", "triton.language.core", "triton.language.standard",
                     "math", "typing", "functools", "itertools", "dataclasses", "collections", "operator", "enum",
                     "os", "os.path", "sys"}
FORBIDDEN_NAMES = {"getattr", "methodcaller", "attrgetter", "type", "object", "super_", "memoryview"}
ARRAY_METHODS = {"numpy", "tolist", "__array__", "__array_interface__", "__cuda_array_interface__",
                 "__dlpack__", "untyped_storage", "storage"}


def _resolve(module_name: str, attrs: list[str]) -> tuple[str | None, object]:
    """Walk ``module.attr1.attr2`` on the real, trusted module; returns (offending path, value)."""
    import importlib
    import types

    try:
        value: object = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - an unimportable module is reported by the import rules
        return None, None
    path = module_name
    for attr in attrs:
        path = f"{path}.{attr}"
        try:
            value = getattr(value, attr)
        except AttributeError:
            return None, None
        if isinstance(value, types.ModuleType) and value.__name__ not in REACHABLE_MODULES:
            return path, value
    return None, value


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_triton_jit(decorator: ast.AST) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = _dotted(target) or ""
    return name.split(".")[-1] in {"jit", "autotune", "heuristics"} and "triton" in name or name == "jit"


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self._inner_attrs: set[int] = set()
        self.module_functions: set[str] = set()
        self.violations: list[Violation] = []
        self.aliases: dict[str, str] = {}  # local name -> fully qualified module/object
        self.kernels: set[str] = set()
        self._in_kernel = 0
        self._in_init = 0

    def add(self, code: str, message: str, line: int) -> None:
        self.violations.append(Violation(code, message, line))

    # --- imports ---------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_import(alias.name, node.lineno)
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add("import", "relative import (candidates are single files)", node.lineno)
            return
        module = node.module or ""
        self._check_import(module, node.lineno)
        for alias in node.names:
            full = f"{module}.{alias.name}"
            self._check_import(full, node.lineno)
            self.aliases[alias.asname or alias.name] = full

    def _check_import(self, name: str, line: int) -> None:
        root = name.split(".")[0]
        if root in PROCESS_MODULES:
            attr = name.split(".")[1] if "." in name else None
            if attr is not None and attr not in PROCESS_MODULES[root]:
                self.add("process", f"uses '{name}'", line)
            return
        if root not in ALLOWED_IMPORTS:
            self.add("import", f"forbidden import '{name}'", line)
        elif root == "torch" and self._forbidden_torch(name) and name not in ("torch.nn.functional",):
            self.add("import", f"forbidden import '{name}'", line)

    @staticmethod
    def _forbidden_torch(name: str) -> bool:
        return any(name == f or name.startswith(f + ".") for f in FORBIDDEN_TORCH_SUBMODULES)

    # --- definitions -------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name == "__init__":  # building parameters is not forward compute: values are copied in anyway
            self._in_init += 1
            self.generic_visit(node)
            self._in_init -= 1
            return
        if any(_is_triton_jit(d) for d in node.decorator_list):
            self.kernels.add(node.name)
            self._in_kernel += 1
            self.generic_visit(node)
            self._in_kernel -= 1
            return
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Try(self, node: ast.Try) -> None:
        self.add("try", "try/except in candidate code (a fallback path could hide a failing kernel)", node.lineno)
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_Global(self, node: ast.Global) -> None:
        self.add("global", "'global' statement (state shared across calls)", node.lineno)

    # --- expressions -------------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        owner = _dotted(node.value)
        module = self.aliases.get(owner or "")
        if module in PROCESS_MODULES and node.attr not in PROCESS_MODULES[module]:
            self.add("process", f"uses '{module}.{node.attr}' (environment, files, processes or frames)", node.lineno)
        if node.attr in INTROSPECTION_ATTRS:
            self.add("introspection", f"introspection through '{node.attr}'", node.lineno)
        elif node.attr in ARRAY_METHODS:
            self.add("host-copy", f"'.{node.attr}' exposes tensor memory to host code", node.lineno)
        if not isinstance(getattr(node, "ctx", None), ast.Load) or not self._is_chain_top(node):
            self.generic_visit(node)
            return
        chain = _dotted(node)
        if chain:
            head, *attrs = chain.split(".")
            full = self.aliases.get(head)
            if full is not None:
                self._check_chain(full, attrs, node.lineno)
        self.generic_visit(node)

    def _is_chain_top(self, node: ast.Attribute) -> bool:
        return id(node) not in self._inner_attrs

    def visit_Module(self, node: ast.Module) -> None:
        for sub in ast.walk(node):  # mark inner links of attribute chains, so each chain is checked once
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute):
                self._inner_attrs.add(id(sub.value))
        self.generic_visit(node)

    def _check_chain(self, full: str, attrs: list[str], line: int) -> None:
        base, *prefix = full.split(".")
        walk = prefix + attrs
        if base in PROCESS_MODULES:
            return  # its own allow-list applies (visit_Attribute)
        private = [a for a in walk if a.startswith("_") and not (a.startswith("__") and a.endswith("__"))]
        if private:
            self.add("private", f"reaches private name '{private[0]}' of '{base}'", line)
            return
        bad, _ = _resolve(base, walk)
        if bad:
            self.add("module-escape", f"reaches module '{bad}' through an allowed import", line)
        qualified = ".".join([base, *walk])
        if base == "torch" and self._forbidden_torch(qualified) and not qualified.startswith("torch.nn.functional"):
            self.add("torch-internals", f"uses '{qualified}'", line)

    def _check_kernel_name(self, node: ast.Name) -> None:
        full = self.aliases.get(node.id)
        if full is not None and not full.startswith("triton") and full.split(".")[0] not in ("math",):
            self.add("kernel-body", f"kernel body uses '{node.id}' ({full}): kernels may only use Triton", node.lineno)
        elif node.id in self.module_functions and node.id not in self.kernels:
            self.add("kernel-body", f"kernel body calls host function '{node.id}'", node.lineno)

    def visit_Name(self, node: ast.Name) -> None:
        if self._in_kernel and isinstance(node.ctx, ast.Load):
            self._check_kernel_name(node)
        if node.id in FORBIDDEN_NAMES and isinstance(node.ctx, ast.Load):
            self.add("dynamic", f"'{node.id}' (dynamic attribute or type access)", node.lineno)
        if node.id in ("PytorchModel", "Model", "get_inputs", "get_init_inputs"):
            self.add("reference", f"reference to the spec's '{node.id}'", node.lineno)
        if node.id in INTROSPECTION_ATTRS:
            self.add("introspection", f"introspection through '{node.id}'", node.lineno)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_store(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_store(node.target)
        self.generic_visit(node)

    def _check_store(self, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_store(element)
        elif isinstance(target, ast.Attribute):
            owner = _dotted(target.value)
            if owner is None:
                self.add("patch", f"assignment to attribute '{target.attr}' of a computed object", target.lineno)
            elif owner.split(".")[0] in self.aliases:
                self.add("patch", f"assignment to module attribute '{owner}.{target.attr}'", target.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func)
        if name in FORBIDDEN_BUILTINS:
            self.add("dynamic", f"dynamic code or I/O builtin '{name}'", node.lineno)
        elif name and not self._in_kernel:
            self._check_call(name, node.lineno)
        self.generic_visit(node)

    def _check_call(self, name: str, line: int) -> None:
        head, _, rest = name.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return
        qualified = f"{full}.{rest}" if rest else full
        if qualified.startswith("torch"):
            short = qualified[len("torch."):] if qualified.startswith("torch.") else ""
            if qualified == "torch.compile" or qualified.startswith(("torch.compile", "torch._dynamo")):
                self.add("compile", "calls torch.compile", line)
            elif qualified in STREAM_CALLS:
                self.add("stream", f"uses a side stream or graph '{qualified}' (work hidden from the timer)", line)
            elif qualified in TIMER_CALLS:
                self.add("timer", f"touches the timing machinery '{qualified}'", line)
            elif self._forbidden_torch(qualified):
                self.add("torch-compute", f"calls '{qualified}' outside a Triton kernel", line)
            elif self._in_init:
                pass  # parameter construction: compute here cannot see inputs, and values are copied in
            elif short and short not in ALLOWED_TORCH_CALLS and not short.startswith(("nn.", "cuda.get_", "float",
                                                                                      "int", "bfloat", "bool")):
                kind = "torch-factory" if short in TENSOR_FACTORIES else "torch-compute"
                self.add(kind, f"calls 'torch.{short}' outside a Triton kernel", line)
        elif qualified.startswith("triton.testing"):
            self.add("timer", "uses triton.testing (benchmarking helpers) in a candidate", line)
