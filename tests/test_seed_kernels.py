"""Seed kernels in knowledge_base/code_samples/ are correct against their built-in op specs.

Runs under Triton's CPU interpreter on each spec's get_test_inputs(), for several seeds, and again with
every tunable halved and doubled (rewritten in the source, as the offline mutator does) to prove the
seeds stay correct for any value the mutator can produce.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"  # must precede the first triton.jit the candidates run

import ast  # noqa: E402
import importlib.util  # noqa: E402
import itertools  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from helpers.kb_coverage import SEED_SAMPLES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OPS = ROOT / "kernelevolve" / "builtin_specs"
SAMPLES_DIR = ROOT / "knowledge_base" / "code_samples"

SAMPLES = SEED_SAMPLES  # sample file -> (op spec, its expected tunables)
SEEDS = (0, 1, 2)
# Ranges the mutator keeps each tunable in; anything else named BLOCK* is a block size.
RANGES = {"NUM_WARPS": (1, 16), "NUM_STAGES": (1, 5), "ROWS_PER_PROGRAM": (1, 64)}
BLOCK_RANGE = (16, 8192)

_counter = itertools.count()


def _load(path: Path):
    """Import a file under a unique module name (Triton's jit reads kernel source from the file)."""
    spec = importlib.util.spec_from_file_location(f"_ke_seed_{path.stem}_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tunables(source: str) -> dict[str, int]:
    """Module-level `UPPER_CASE = <int>` assignments: what the mutator rewrites."""
    found = {}
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and re.fullmatch(r"[A-Z][A-Z0-9_]*", node.targets[0].id)
                and isinstance(node.value, ast.Constant) and type(node.value.value) is int):
            found[node.targets[0].id] = node.value.value
    return found


def _check(spec, sample, seeds) -> None:
    for seed in seeds:
        torch.manual_seed(seed)
        ref = spec.PytorchModel(*spec.get_init_inputs())
        cand = sample.TritonModel(*spec.get_init_inputs())
        cand.load_state_dict(ref.state_dict())
        for name, args in spec.get_test_inputs().items():
            with torch.no_grad():
                expected = ref(*args)
                out = cand(*args)
            where = f"case {name}, seed {seed}"
            assert out.shape == expected.shape and out.dtype == expected.dtype, where
            assert torch.isfinite(out).all(), where
            atol, rtol = spec.TOLERANCES[expected.dtype]
            torch.testing.assert_close(out, expected, atol=atol, rtol=rtol,
                                       msg=lambda m, w=where: f"{w}: {m}")


def _variants():
    for sample, (_, expected) in SAMPLES.items():
        for name in sorted(expected):
            for factor in (0.5, 2):
                yield pytest.param(sample, name, factor, id=f"{sample}-{name}-x{factor}")


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_seed_is_correct(sample):
    op, expected_tunables = SAMPLES[sample]
    path = SAMPLES_DIR / f"{sample}.py"
    source = path.read_text()
    assert source.startswith('"""\n---\n') and f"\nop: {op}\n" in source, "YAML front matter missing"
    assert set(_tunables(source)) == expected_tunables
    _check(_load(OPS / f"{op}.py"), _load(path), SEEDS)


@pytest.mark.parametrize("sample,name,factor", list(_variants()))
def test_seed_survives_mutation(sample, name, factor, tmp_path):
    op, _ = SAMPLES[sample]
    source = (SAMPLES_DIR / f"{sample}.py").read_text()
    value = int(_tunables(source)[name] * factor)
    low, high = RANGES.get(name, BLOCK_RANGE)
    if not low <= value <= high:
        pytest.skip(f"{name}={value} is outside the mutator's range [{low}, {high}]")
    mutated, n = re.subn(rf"^{name}\s*=\s*\d+", f"{name} = {value}", source, count=1, flags=re.M)
    assert n == 1
    path = tmp_path / f"{sample}_{name}_{value}.py"
    path.write_text(mutated)
    _check(_load(OPS / f"{op}.py"), _load(path), SEEDS[:1])
