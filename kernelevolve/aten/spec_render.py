"""Rendering one suite op as a standalone operator spec file (the contract of ``kernelevolve/builtin_specs/*.py``).

The spec's reference calls the exact ATen overload through ``torch.ops.aten``; its cases are the recipes
from ``inputs.py`` written as literal data, built by an inlined ``_gen`` so the file needs nothing from
this package. FLOPS counts the op's arithmetic per element; BYTES is the minimal traffic (every input
read once, or only the gathered rows for gathers, plus every output written once; output sizes come from
running the reference on meta tensors).
"""

from __future__ import annotations

from kernelevolve.aten.inputs import GEN_SOURCE, TOLERANCE_CLASSES, cases_for
from kernelevolve.aten.op import AtenOp

FAMILY_DOC = {
    "elementwise": "Elementwise over its arguments (a later argument may be a row broadcast along the last dim).\n"
                   "The output dtype follows ATen's type promotion; floating inputs are computed in fp32 and\n"
                   "rounded once to the output dtype, integers and bools exactly.",
    "reduction": "Reduces the last dim (or every element, for the full overloads); floating inputs accumulate in\n"
                 "fp32 and round once, integer and bool sums and products accumulate in int64.",
    "scan": "An inclusive scan along the last dim; floating inputs accumulate in fp32, and every prefix is\n"
            "rounded once to the output dtype (integer and bool cumsums produce int64).",
    "norm": "A row-wise (or group/channel-wise) normalization: statistics in fp32, outputs rounded once.",
    "gather": "Indexed data movement (gathers, scatters, searches): values are moved, not computed, except the\n"
              "accumulating scatters, which add in the data's dtype (fp32 or integer).",
    "layout": "Data movement that rearranges or pads its input: every output value is an input value (or the\n"
              "pad constant), so outputs must match bit for bit.",
}
KIND_DOC = {
    "sum": "the sum of the reduced elements (0 for none)", "mean": "their mean (NaN for none)",
    "amax": "their maximum (NaN if one is NaN)", "amin": "their minimum (NaN if one is NaN)",
    "max_dim": "(maximum, int64 index of its first occurrence)",
    "min_dim": "(minimum, int64 index of its first occurrence)",
    "argmax": "the int64 index of the first maximum", "argmin": "the int64 index of the first minimum",
    "prod": "the product of the reduced elements (1 for none)",
    "var": "sum((x - mean)^2) / max(N - correction, 0)", "std": "the square root of that variance",
    "var_mean": "(variance with the correction, mean)", "logsumexp": "log(sum(exp(x))), computed shifted by the max",
    "norm2": "sqrt(sum(x^2))", "norm1": "sum(|x|)", "all": "True iff every element is nonzero",
    "any": "True iff some element is nonzero", "count_nonzero": "the int64 count of nonzero elements",
    "cumsum": "y[j] = x[0] + ... + x[j]", "cumprod": "y[j] = x[0] * ... * x[j]",
    "cummax": "(running maximum, int64 index of its last occurrence so far)",
    "cummin": "(running minimum, int64 index of its last occurrence so far)",
    "logcumsumexp": "y[j] = log(exp(x[0]) + ... + exp(x[j]))",
    "layer_norm": "(y = (x - mean) * rstd * w + b, mean, rstd) over the last dim with the population variance and\n"
                  "rstd = 1/sqrt(var + eps); mean/rstd have shape [..., 1] and x's dtype on CPU, fp32 on CUDA",
    "rms_norm": "y = x / sqrt(mean(x^2) + eps) * w over the last dim",
    "softmax": "y = exp(x - max) / sum(exp(x - max)) over the last dim",
    "log_softmax": "y = x - max - log(sum(exp(x - max))) over the last dim",
    "softmax_backward": "grad_input = out * (grad - sum(grad * out)) over the last dim",
    "log_softmax_backward": "grad_input = grad - exp(out) * sum(grad) over the last dim",
    "group_norm": "(y, mean [N, 4], rstd [N, 4]): each group of C/4 channels x HW normalized with its mean and\n"
                  "population variance, then scaled and shifted by the per-channel w, b",
    "batch_norm_eval": "y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * w[c] + b[c] (output 0)",
    "index_select": "the rows of the first argument picked by idx: shape idx.shape + its row shape",
    "gather": "out[..., k] = x[..., idx[..., k]]", "take": "out = x.flatten()[idx], shaped like idx",
    "scatter_add": "a copy of x with src[..., k] added at [..., idx[..., k]] (repeated indices accumulate)",
    "scatter": "a copy of x with src[..., k] stored at [..., idx[..., k]] (indices distinct within a row)",
    "index_add": "a copy of x with src[k] added to row idx[k]",
    "embedding_backward": "zeros [num_weights, D] with grad[k] added to row idx[k] (padding_idx -1: nothing\n"
                          "skipped, no frequency scaling)",
    "bucketize": "the int64 number of boundaries strictly below each x (right=False)",
    "triu": "x with the elements below diagonal 1 of the last two dims zeroed",
    "tril": "x with the elements above diagonal -1 of the last two dims zeroed",
    "flip": "x reversed along dims 0 and -1", "cat": "x and y concatenated along the last dim (promoted dtype)",
    "stack": "x and y stacked along a new last dim (promoted dtype)",
    "pad": "x padded on the last dim with 2 leading and 3 trailing ones",
    "roll": "x rolled by 3 along the last dim", "repeat": "x tiled 2 x 3 over its (last) two dims",
}
_DTYPE_NAMES = {"float32": "torch.float32", "float16": "torch.float16", "bfloat16": "torch.bfloat16"}


def _cases_literal(name: str, cases: dict) -> str:
    lines = [f"{name} = {{"]
    for case, recipes in cases.items():
        lines.append(f"    {case!r}: {recipes!r},")
    lines.append("}")
    return "\n".join(lines)


def _formula(op: AtenOp) -> str:
    """What a non-elementwise op computes, as a line of the docstring (FAMILY_DOC says it for elementwise)."""
    return "" if op.family == "elementwise" else f"Computes {KIND_DOC[op.kernel]}.\n"


def _bytes_source(op: AtenOp) -> str:
    names = op.arg_names
    if op.opt("bytes_rule") == "gather" or op.kernel in ("index_select", "gather", "take"):
        idx = names.index("idx")
        return (f"    # indices read once, then only the gathered values: as many as the output has\n"
                f"    return _nbytes(case[{idx}]) + 2 * sum(_nbytes(o) for o in _outputs(case))")
    reads = op.opt("reads")
    chosen = names if reads is None else tuple(reads.split())
    picks = ", ".join(f"case[{names.index(n)}]" for n in chosen)
    read = f"sum(_nbytes(t) for t in ({picks},))" if picks else "0"
    return ("    # minimal traffic: each input the op reads, read once, and each output written once\n"
            f"    return {read} + sum(_nbytes(o) for o in _outputs(case))")


ACC32_NOTE = (
    "On an H200 (torch 2.11), ATen's bf16 cumsum, cumprod and logcumsumexp differed from an\n"
    "            # fp32-accumulating scan by up to 4.5, 34 and 0.28 (consistent with accumulating in the\n"
    "            # storage type); the CPU accumulates in fp32. The suite asks for fp32 accumulation rounded\n"
    "            # once, so 16-bit inputs run the same overload on their exact fp32 upcast.")


def _forward_body(op: AtenOp) -> str:
    """The reference's body: the overload as is, or (``acc32`` scans) on an fp32 upcast of 16-bit inputs."""
    if not op.opt("acc32"):
        return f"        return {op.call}"
    upcast = op.call.replace("(x,", "(x.float(),", 1)
    return (f"        if x.dtype in (torch.float16, torch.bfloat16):\n"
            f"            # {ACC32_NOTE}\n"
            f"            return {upcast}.to(x.dtype)\n"
            f"        return {op.call}")


def render_spec(op: AtenOp) -> str:
    """The full text of a spec file for ``op``."""
    prod, test = cases_for(op)
    tolerances, reason_lines = TOLERANCE_CLASSES[op.tol]
    reason = "\n# ".join(reason_lines)
    tol_items = ", ".join(f"{_DTYPE_NAMES[d]}: {v!r}" for d, v in tolerances.items())
    args = ", ".join(op.arg_names)
    basis = {"elementwise": "_outputs(case)[0].numel()"}.get(op.family, "case[0].numel()")
    if op.kernel in ("scatter_add", "index_add"):
        basis = "case[-1].numel()"  # one add per source element
    return f'''"""ATen ``{op.overload}``: ``{op.call}``.

Part of the 160-operator ATen coverage suite (issue #8): category {op.category}, family
{op.family}. {FAMILY_DOC[op.family]}
{_formula(op)}Production cases are GPU-sized (timing, simulated targets); test cases are small enough for Triton's CPU
interpreter and cover odd sizes, several dims, empty tensors where the op accepts them and every dtype.
Generated by kernelevolve.aten.spec_render from the suite table; regenerate it rather than editing it.
"""

import torch
import torch.nn as nn

OP = "{op.overload}"


class PytorchModel(nn.Module):
    """Reference: the ATen overload itself, dispatched through torch.ops."""

    def forward(self, {args}):
{_forward_body(op)}


def get_init_inputs() -> list:
    return []


{GEN_SOURCE}


{_cases_literal("_PROD", prod)}

{_cases_literal("_TEST", test)}


def _build(recipes, device):
    return {{name: tuple(_gen(*r, device=device) for r in args) for name, args in recipes.items()}}


def get_inputs(device="cpu") -> dict[str, tuple]:
    """Production cases (the evaluator seeds torch before calling)."""
    return _build(_PROD, device)


def get_test_inputs(device="cpu") -> dict[str, tuple]:
    """Small cases for the CPU interpreter."""
    return _build(_TEST, device)


# {reason}
TOLERANCES = {{{tol_items}}}
FLOPS_PER_ELEMENT = {op.flops!r}


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


def _outputs(case):
    with torch.no_grad():
        out = PytorchModel()(*[t.to("meta") if isinstance(t, torch.Tensor) else t for t in case])
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def FLOPS(case) -> int:
    return int(FLOPS_PER_ELEMENT * {basis})


def BYTES(case) -> int:
{_bytes_source(op)}
'''
