"""The lowering's cache of torch.export's composite-op walk: one walk per registry state, never a stale one."""

from __future__ import annotations

import torch

from kernelevolve.lowering import composite_ops


def test_the_walk_is_reused_until_a_composite_op_is_registered() -> None:
    import torch.export.exported_program as exported_program

    composite_ops.install()
    collect = exported_program._collect_all_valid_cia_ops
    first = collect()
    assert collect() is first  # the same registry: no second walk

    library = torch.library.Library("ke_cia_cache_probe", "DEF")  # a new namespace and a new functional CIA op
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
    after = collect()
    assert after is not first
    probe = torch.ops.ke_cia_cache_probe.twice.default
    assert probe in after and probe not in first


def test_a_decomposition_still_preserves_and_decomposes_as_torch_does() -> None:
    """Through the cache, run_decompositions still decomposes a composite op it is asked to and keeps the rest."""
    from kernelevolve.lowering.trace import _export

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.hardswish(x) + torch.nn.functional.silu(x)

    program = _export(Model(), (torch.randn(4, 8),), None)
    targets = {str(n.target) for n in program.graph_module.graph.nodes if n.op == "call_function"}
    assert not any("hardswish" in t or "silu" in t for t in targets), targets  # the lowering's table decomposes both
    assert composite_ops._PATCHED and composite_ops._COLLECTED
