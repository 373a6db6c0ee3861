"""The state one lowering builds up: host names of graph values, forward lines, kernels and tunables.

Sizes stay symbolic: every shape, view argument or size scalar is printed as a host expression over the
forward's inputs (``x.shape[0]``), so the kernels (which take sizes and strides at launch) and the forward
serve every case of the spec, not only the traced one.
"""

from __future__ import annotations

import re
from typing import Any

import torch
from torch.fx import Node

from kernelevolve.lowering.errors import LoweringError
from kernelevolve.lowering.source_text import wrap_call
from kernelevolve.lowering.trace import Traced

CT = {torch.float16: "tl.float32", torch.bfloat16: "tl.float32", torch.float32: "tl.float32",
      torch.float64: "tl.float64", torch.int8: "tl.int8", torch.uint8: "tl.uint8", torch.int16: "tl.int16",
      torch.int32: "tl.int32", torch.int64: "tl.int64", torch.bool: "tl.int1"}


SYM_FUNCTIONS = {"torch.sym_float": "float", "torch.sym_int": "int", "torch.sym_sqrt": "math.sqrt",
                 "torch.sym_min": "min", "torch.sym_max": "max", "torch.sym_sum": "sum"}


def compute_type(dtype: torch.dtype) -> str:
    """Triton type a kernel computes a value of ``dtype`` in: fp32 for 16/32-bit floats."""
    if dtype not in CT:
        raise LoweringError(f"no Triton lowering for dtype {dtype}")
    return CT[dtype]


def op_name(node: Node) -> str:
    """``aten.add.Tensor`` style name of a call node (used in messages and comments)."""
    target = node.target
    return str(target) if hasattr(target, "_schema") else getattr(target, "__name__", str(target))


def packet(node: Node) -> str:
    """The overload packet of an ATen call: ``add`` for ``aten.add.Tensor``."""
    target = node.target
    if getattr(target, "namespace", "aten") not in ("aten", "kernelevolve"):
        return ""  # prims and other namespaces have other schemas: never mistaken for the aten op
    # kernelevolve::lstm and the other whole recurrences (evaluators/recurrent_ops.py) take aten.lstm's arguments
    return target.overloadpacket.__name__ if hasattr(target, "overloadpacket") else ""


def val(node: Any) -> Any:
    return node.meta.get("val") if isinstance(node, Node) else node


class Context:
    """Host-side bookkeeping of one lowering; template modules append kernels and forward lines."""

    def __init__(self, traced: Traced, interpreter: bool = False, nvidia: bool = False) -> None:
        from torch.utils._sympy.printers import PythonPrinter

        self.traced = traced
        self.interpreter = interpreter  # defaults for Triton's CPU interpreter (the cpu target): larger tiles
        self.nvidia = nvidia  # an NVIDIA GPU target: fp32 dots as three TF32 products on tensor cores (dots.py)
        self.printer = PythonPrinter()
        self.env: dict[str, str] = {}  # node name -> host variable holding the tensor
        self.symbols: dict[str, str] = {}  # sympy symbol -> host expression
        self.forward: list[str] = []
        self.kernels: list[str] = []
        self.tunables: list[tuple[str, int, str]] = []
        self.roots: dict[str, str] = {}  # host variable -> the forward argument it views ('' if none)
        self.counter: dict[str, int] = {}
        self.ref_dtype: tuple[str, torch.dtype] | None = None
        self.device = "dev"
        self.done: set[str] = set()  # nodes already emitted as part of another node's kernel
        self.multi: dict[str, list[str]] = {}  # multi-output node -> host variable of each output
        self.inline: set[str] = set()  # pointwise nodes computed inside their user's kernel
        self.prologue: set[str] = set()  # pointwise chain roots computed at their consumer's loads
        self.cats: list[tuple[int, tuple[str, ...], str, torch.dtype]] = []  # (dim, inputs, variable, dtype) per cat

    # --- names --------------------------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        k = self.counter.get(prefix, 0)
        self.counter[prefix] = k + 1
        return f"{prefix}{k}"

    def hint(self, size: Any) -> int:
        """The value of a size that block-size defaults are chosen from: in the production case where the
        trace recorded it, else in the traced case."""
        if isinstance(size, torch.SymInt):
            if self.traced.production_sizes:
                value = size.node.expr.subs(self.traced.production_sizes)
                if value.is_number:
                    return int(value)
            hint = size.node.hint
            return int(hint) if hint is not None else 64
        return int(size)

    def block(self, size: Any, lo: int, hi: int, interpreter_hi: int | None = None) -> int:
        """A power-of-two tile covering ``size`` (traced value) within [lo, hi]; on the CPU interpreter,
        where each program step costs the same whatever its tile, up to ``interpreter_hi``."""
        n = max(1, self.hint(size))
        top = interpreter_hi if (self.interpreter and interpreter_hi) else hi
        p = 1
        while p < n and p < top:
            p *= 2
        return max(lo, min(p, top))

    def tunable(self, name: str, value: int, comment: str) -> str:
        self.tunables.append((name, value, comment))
        return name

    def pid(self, axis: int) -> str:
        """A kernel's program id along ``axis`` as the base of its element offsets: on NVIDIA targets int32
        unless the launch says ``IDX64`` (see ``idx_param``/``idx_launch``), elsewhere int64 as before."""
        return f"_pid({axis}, IDX64)" if self.nvidia else f"tl.program_id({axis}).to(tl.int64)"

    def idx_param(self) -> list[str]:
        """The ``IDX64`` constexpr parameter that ``pid`` reads (NVIDIA targets only)."""
        return ["IDX64: tl.constexpr"] if self.nvidia else []

    def idx_launch(self, tensors: list[str]) -> list[str]:
        """The launch argument for ``idx_param``: 64-bit offsets only where one of ``tensors`` needs them."""
        return [f"IDX64=_i64({', '.join(tensors)})"] if self.nvidia else []

    def sizes(self, names: list[str]) -> list[str]:
        """Size parameters that index math divides by: compile-time constants on NVIDIA targets, so ``//`` and
        ``%`` by them compile to a multiply and shift instead of a division routine per element (a kernel is
        then compiled once per shape, as TorchInductor's static-shape kernels are); plain ints elsewhere."""
        return [f"{n}: tl.constexpr" for n in names] if self.nvidia else list(names)

    def line(self, text: str) -> None:
        self.forward.append(text)

    def launch(self, head: str, args: list[str]) -> None:
        """A kernel launch, its arguments wrapped onto continuation lines."""
        self.forward.extend(wrap_call(head, args, indent="    ", width=104).split("\n"))

    def bind(self, node: Node, var: str, root: str = "") -> None:
        self.env[node.name] = var
        self.roots[var] = root

    def tensor(self, arg: Any) -> str:
        if not isinstance(arg, Node) or arg.name not in self.env:
            raise LoweringError(f"internal: tensor argument {arg} has no host value")
        return self.env[arg.name]

    # --- host expressions ---------------------------------------------------------------------------
    def sym(self, value: Any) -> str:
        """A host expression for an int, SymInt, float, SymFloat, bool or SymBool."""
        if isinstance(value, Node):
            return self.sym(val(value))
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            text = self.printer.doprint(value.node.expr)

            def name(m: re.Match) -> str:
                if m.group(0) not in self.symbols:
                    raise LoweringError(f"size {m.group(0)} of the trace is not a size of any input")
                return self.symbols[m.group(0)]

            text = re.sub(r"\b[su]\d+\b", name, text)
            for torch_name, plain in SYM_FUNCTIONS.items():  # torch.sym_* calls are torch compute to the checks
                text = text.replace(torch_name + "(", plain + "(")
            return "(" + text + ")"
        if isinstance(value, bool) or value is None:
            return repr(value)
        if isinstance(value, (int, float)):
            from kernelevolve.lowering.pointwise_ops import lit

            return lit(value)
        raise LoweringError(f"internal: no host expression for {type(value).__name__}")

    def host(self, value: Any) -> str:
        """Any view/allocation argument as host code: ints, sizes, lists of them, dtypes, None."""
        if isinstance(value, (list, tuple)):
            inner = ", ".join(self.host(v) for v in value)
            return f"[{inner}]"
        if isinstance(value, torch.dtype):
            return str(value)
        if isinstance(value, Node) and isinstance(val(value), torch.Tensor):
            return self.tensor(value)
        return self.sym(value)

    def shape(self, value: Any) -> str:
        """``(a, b)`` / ``(a,)`` / ``()``: the host tuple of a node's (or fake tensor's) sizes."""
        dims = [self.sym(d) for d in val(value).shape]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def dtype(self, dtype: torch.dtype) -> str:
        """The host dtype of an output: the reference input's own dtype where the trace's matches it, so
        a case in another floating dtype gets outputs in that dtype."""
        if self.ref_dtype and dtype == self.ref_dtype[1]:
            return f"{self.ref_dtype[0]}.dtype"
        return str(dtype)

    def empty(self, var: str, node: Node, value: Any = None, dtype: torch.dtype | None = None) -> None:
        value = val(node) if value is None else value
        kind = self.dtype(dtype or value.dtype)
        self.line(f"{var} = torch.empty({self.shape(value)}, dtype={kind}, device={self.device})")

    def empty_outputs(self, node: Node) -> list[str]:
        """One fresh buffer per output of a (possibly multi-output) node, allocated in the forward."""
        outputs = val(node) if isinstance(val(node), (list, tuple)) else [val(node)]
        names = []
        for value in outputs:
            names.append(self.fresh("buf"))
            self.empty(names[-1], node, value)
        return names
