"""The torch.compile baseline is a fresh static compile per case, whatever ran before it (issue: one module
reused across cases recompiled with dynamic shapes, so every later case timed a slower dynamic kernel).

A recording backend stands in for Inductor: it sees exactly the graph and example inputs Dynamo hands the
real backend, which is where static versus dynamic shapes is decided. No device is needed."""

from __future__ import annotations

import statistics

import torch

from evaluators.performance import screen_estimates, static_compile


class _Softmax(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1) * 2.0


class _Recorder:
    """A Dynamo backend that records each compiled graph's input shapes and whether any size is symbolic."""

    def __init__(self) -> None:
        self.graphs: list[tuple[list[tuple], bool]] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> object:
        shapes, symbolic = [], False
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                value = node.meta.get("example_value")
                if isinstance(value, torch.Tensor):
                    shapes.append(tuple(value.shape))
                    symbolic |= any(isinstance(s, torch.SymInt) for s in value.shape)
                elif isinstance(value, torch.SymInt):
                    symbolic = True
        self.graphs.append((shapes, symbolic))
        return gm.forward


CASE_A = (torch.randn(64, 96),)
CASE_B = (torch.randn(32, 48),)
CASE_C = (torch.randn(16, 200),)


def _compiled_graph_of(sequence: list[tuple]) -> tuple[list[tuple], bool]:
    """Compile each case of ``sequence`` as the evaluator does; the graph recorded for the last one."""
    reference = _Softmax()
    recorder = _Recorder()
    for inputs in sequence:
        before = len(recorder.graphs)
        compiled = static_compile(reference, inputs, backend=recorder)
        with torch.no_grad():  # as the timer calls it: a change of grad mode would be a recompile
            torch.testing.assert_close(compiled(*inputs), reference(*inputs))
        assert len(recorder.graphs) == before + 1, "each case gets its own compile"
    return recorder.graphs[-1]


def test_a_case_compiles_statically_whatever_ran_before_it() -> None:
    alone = _compiled_graph_of([CASE_B])
    after_others = _compiled_graph_of([CASE_A, CASE_C, CASE_B])
    assert alone == after_others
    assert alone == ([(32, 48)], False), alone


def test_one_module_reused_across_cases_goes_dynamic() -> None:
    """The control: the old way (one compiled module for every case) hands later cases a symbolic graph,
    so the test above would fail if static_compile fell back to it."""
    torch._dynamo.reset()
    recorder = _Recorder()
    shared = torch.compile(_Softmax(), backend=recorder)
    for inputs in (CASE_A, CASE_C, CASE_B):
        shared(*inputs)
    assert recorder.graphs[0][1] is False
    assert any(symbolic for _, symbolic in recorder.graphs[1:]), recorder.graphs


def test_screened_fitness_never_exceeds_the_same_samples_medians() -> None:
    """The screening rule's pessimistic estimate is below the medians' ratio (the full timing's statistic) and
    its optimistic estimate above it, for skewed and noisy samples alike."""
    import random

    rng = random.Random(7)
    for _ in range(200):
        samples, ratios = {}, {}
        for case in ("a", "b", "c"):
            base_c, base_e = rng.uniform(0.01, 2.0), rng.uniform(0.01, 2.0)
            cand = [base_c * rng.lognormvariate(0, rng.uniform(0.0, 0.3)) for _ in range(20)]
            eager = [base_e * rng.lognormvariate(0, rng.uniform(0.0, 0.3)) for _ in range(20)]
            samples[case], ratios[case] = (cand, eager), rng.uniform(0.5, 1.5)
        optimistic, pessimistic = screen_estimates(samples, ratios)
        medians = statistics.geometric_mean(
            [ratios[c] * statistics.median(e) / statistics.median(k) for c, (k, e) in samples.items()])
        assert pessimistic <= medians * (1 + 1e-12) <= optimistic * (1 + 1e-12)
