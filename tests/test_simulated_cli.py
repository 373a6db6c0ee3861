"""Issue #4's acceptance commands: simulated targets answer with a time and ``simulated: true`` within a
minute on a 2-core machine; device targets without a device refuse with a hint instead of simulating."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import REPO_ROOT

SAMPLES = Path(REPO_ROOT) / "knowledge_base" / "code_samples"


def test_mtia_v3_eval_is_simulated(ke, tmp_path: Path) -> None:
    started = time.monotonic()
    result = ke("eval", "--op", "swish", "--hw", "mtia-v3", str(SAMPLES / "swish.py"), "--json",
                "--state-dir", str(tmp_path))
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    payload = result.json()
    assert payload["status"] == "ok" and payload["simulated"] is True and payload["timed"] is False
    timed = [c for c in payload["cases"] if c["latency_ms"]]
    assert {c["name"] for c in timed} == {"4096x4096", "1M", "odd_2049x1000"}  # the production cases
    assert all(c["latency_ms"] > 0 and c["eager_ms"] > 0 for c in timed)
    assert payload["fitness"] > 0
    assert elapsed < 60, f"took {elapsed:.0f} s"


def test_conv1d_on_mi350_with_simulate(ke, tmp_path: Path) -> None:
    started = time.monotonic()
    result = ke("eval", "--op", "conv1d", "--hw", "mi350", "--simulate", str(SAMPLES / "conv1d.py"), "--json",
                "--state-dir", str(tmp_path))
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    payload = result.json()
    assert payload["simulated"] is True and payload["target"] == "mi350"
    prod = {c["name"]: c for c in payload["cases"] if c["latency_ms"]}
    assert set(prod) == {"prod_fp16", "prod_fp32"}
    assert prod["prod_fp32"]["latency_ms"] > prod["prod_fp16"]["latency_ms"]  # twice the bytes, slower math
    assert elapsed < 60, f"took {elapsed:.0f} s"


def test_simulated_search_records_simulation(ke, tmp_path: Path) -> None:
    result = ke("search", "--op", "swish", "--hw", "mtia-v3", "--budget", "3", "--json",
                "--state-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    summary = result.json()
    assert summary["simulated"] is True and summary["nodes"] == 3
    shown = ke("show", summary["run_id"], "--json", "--state-dir", str(tmp_path)).json()
    assert shown["run"]["simulated"] is True
    assert all(n["fitness"] > 0 for n in shown["nodes"] if n["status"] == "ok")


def test_a_simulated_verdict_is_cached_apart_from_measured_ones(ke, tmp_path: Path) -> None:
    """The evaluation cache is keyed by target: a simulated h100 run's verdicts were stored under ``h100``,
    where a later measured h100 run in the same state would have taken them as its own timings."""
    import duckdb

    result = ke("search", "--op", "swish", "--hw", "h100", "--simulate", "--budget", "2", "--executor", "local",
                "--json", "--state-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    with duckdb.connect(str(tmp_path / "ke.duckdb"), read_only=True) as conn:
        targets = {row[0] for row in conn.execute("SELECT target FROM eval_cache").fetchall()}
    assert targets == {"h100+sim"}


PINNED_SPEC = '''
import torch
import torch.nn as nn

batch_size = 4096
hidden = 256


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return torch.relu(self.norm(x))


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
'''


def test_a_simulated_target_checks_at_the_production_constructor_args(ke, tmp_path: Path) -> None:
    """A LayerNorm's width comes from the constructor args, and the draft fixes it. The simulated target checks
    on a case that keeps those args (only the batch shrunk, never to 1), so the draft checked there is also the
    one estimated at the production size, instead of refusing it with 'traced with it fixed at 64'."""
    from evaluators.spec import load_spec

    spec_path = tmp_path / "layernorm_relu.py"
    spec_path.write_text(PINNED_SPEC, encoding="utf-8")
    spec = load_spec(spec_path)
    assert spec.init_args("sim") == spec.init_args("prod") == [256]
    assert spec.init_args("test") != spec.init_args("prod")  # the interpreter's plain check shrinks the width
    (x,) = spec.cases("sim")["case0"]
    assert x.shape[1] == 256 and min(x.shape) > 1 and x.numel() < 4096 * 256
    result = ke("search", "--op", str(spec_path), "--hw", "mtia-v3", "--budget", "1", "--executor", "local",
                "--json", "--state-dir", str(tmp_path / "state"))
    assert result.returncode == 0, result.stderr
    shown = ke("show", result.json()["run_id"], "--json", "--state-dir", str(tmp_path / "state")).json()
    node = shown["nodes"][0]
    assert node["status"] == "ok", node
