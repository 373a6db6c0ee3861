"""KernelBench files (production inputs only) get small test inputs by scaling their size constants down;
a file that cannot be shrunk is refused on the cpu target with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers.cli_checks import assert_clean_failure

from evaluators.shrink import ELEMENT_CAP, FALLBACK_ELEMENT_CAP
from evaluators.spec import SpecError, load_spec
from kernelevolve.builtin_specs import resolve_op
from kernelevolve.cli.common import shrunk_line

SPECS = Path(__file__).parent / "specs"
CANDIDATES = Path(__file__).parent / "sandbox_candidates"


def test_large_file_gets_a_consistent_shrunk_test_case() -> None:
    spec = load_spec(SPECS / "kernelbench_big_linear_conv.py")
    shrunk = spec.shrunk
    # out_channels shapes neither the input nor the output (the conv is pooled and flattened into the linear
    # layer), but it shares its value with height and width, which are extents: one size, shrunk as one
    assert set(shrunk) == {"batch_size", "in_channels", "out_channels", "height", "width", "hidden"}
    assert all(new < old for old, new in shrunk.values()), shrunk
    assert "groups" not in shrunk and "kernel_size" not in shrunk  # small ints are never changed
    (x,) = spec.cases("test")["case0"]
    assert x.numel() <= ELEMENT_CAP and tuple(x.shape) == (shrunk["batch_size"][1], shrunk["in_channels"][1],
                                                            shrunk["height"][1], shrunk["width"][1])
    init = spec.init_args("test")
    assert init[2] == 3 and init[0] % 3 == 0 and init[1] % 3 == 0  # grouped conv stays valid
    reference = spec.reference_cls(*init).eval()
    with torch.no_grad():
        out = reference(x)  # Linear's in_features (from init args) matches the shrunk activations
    assert tuple(out.shape) == (shrunk["batch_size"][1], shrunk["hidden"][1])
    # production stays as written: constants restored, prod init args and shapes untouched
    assert spec.module.batch_size == 512 and spec.init_args() == [48, 96, 3, 96, 96, 4096, 3]
    assert tuple(spec.cases("prod", "meta")["case0"][0].shape) == (512, 48, 96, 96)


def test_a_dilated_asymmetric_conv_keeps_every_structural_constant() -> None:
    """Kernel (5, 9), stride (1, 2), padding (12, 20), dilation (3, 10): all above the never-changed small ints,
    all structural. Only extents shrink; the width stays wide enough for the 81-wide dilated kernel."""
    spec = load_spec(SPECS / "kernelbench_dilated_asymmetric_conv.py")
    shrunk = spec.shrunk
    assert shrunk and set(shrunk) <= {"batch_size", "in_channels", "out_channels", "height", "width"}, shrunk
    init = spec.init_args("test")
    assert init[2:] == [(5, 9), (1, 2), (12, 20), (3, 10)]
    (x,) = spec.cases("test")["case0"]
    assert x.numel() <= ELEMENT_CAP
    with torch.no_grad():
        out = spec.reference_cls(*init).eval()(x)
    assert out.numel() > 0 and spec.init_args() == [32, 64, (5, 9), (1, 2), (12, 20), (3, 10)]


def test_only_a_structural_change_would_fit_so_it_is_refused_in_one_line() -> None:
    spec = load_spec(SPECS / "kernelbench_structural_only.py")
    with pytest.raises(SpecError) as err:
        spec.cases("test")
    message = str(err.value)
    assert "cannot be shrunk" in message and "\n" not in message
    assert "only its structural constants (kernel_size, stride) could" in message


def test_planning_leaves_the_seeded_inputs_unchanged() -> None:
    """The candidate and judge processes draw inputs after seeding; planning (which runs the reference) in one
    of them only must not shift what the seed gives."""
    planned = load_spec(SPECS / "kernelbench_big_double.py")
    planned.test_shrink()
    fresh = load_spec(SPECS / "kernelbench_big_double.py")
    torch.manual_seed(5)
    a = fresh.cases("test")["case0"][0]  # plans inside this call
    torch.manual_seed(5)
    b = planned.cases("test")["case0"][0]
    assert a.shape == (64, 64) and torch.equal(a, b)


def test_small_or_own_test_inputs_are_not_shrunk() -> None:
    assert load_spec(SPECS / "kernelbench_swish.py").shrunk == {}  # already small: test case = production case
    assert load_spec(SPECS / "seeded_length_swish.py").shrunk == {}  # sizes drawn with .item(): counted for real
    assert load_spec(resolve_op("conv1d")).shrunk == {}  # large production cases, but its own get_test_inputs


def test_a_file_that_cannot_be_shrunk_is_one_line() -> None:
    spec = load_spec(SPECS / "kernelbench_unshrinkable.py")  # loading alone still works (GPU targets need no shrink)
    with pytest.raises(SpecError) as err:
        spec.cases("test")
    message = str(err.value)
    assert "cannot be shrunk" in message and "no module-level size constants" in message and "\n" not in message


def test_search_refuses_an_unshrinkable_file_on_cpu(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    spec = str(SPECS / "kernelbench_unshrinkable.py")
    searched = ke("search", "--op", spec, "--hw", "cpu", "--executor", "local", "--state-dir", str(state))
    assert_clean_failure(searched, "cannot be shrunk", state)


def test_eval_on_cpu_checks_the_shrunk_case_and_says_so(ke, tmp_path: Path) -> None:
    result = ke("eval", "--op", str(SPECS / "kernelbench_big_double.py"), "--hw", "cpu",
                str(CANDIDATES / "double_honest.py"), "--json", "--state-dir", str(tmp_path / "s"))
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "ok", payload["reason"]
    assert payload["extra"]["shrunk"] == {"batch_size": [4096, 64], "dim": [16384, 64]}
    assert shrunk_line(payload["extra"]["shrunk"]).endswith(  # what the text output prints under the status
        "test inputs shrunk from the production sizes: batch_size 4096->64, dim 16384->64")


def test_search_on_cpu_records_the_shrink_in_the_run_and_its_nodes(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = ke("search", "--op", str(SPECS / "kernelbench_big" / "swish.py"), "--hw", "cpu", "--budget", "1",
                "--executor", "local", "--json", "--state-dir", str(state))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["shrunk"] == {"batch_size": [4096, 64], "dim": [16384, 64]}
    node = json.loads(next((state / "artifacts" / "runs" / summary["run_id"]).glob("nodes/*/evaluation.json"))
                      .read_text())
    assert node["status"] == "ok" and node["extra"]["shrunk"] == summary["shrunk"]


def test_a_case_no_scaling_brings_under_the_cap_is_checked_at_its_smallest_faithful_size(tmp_path: Path) -> None:
    """A classifier whose 3x224x224 images are written into get_inputs (only the batch is a constant): batch 1
    is above the cap, so the smallest case the reference runs on, under the fallback cap, is the test case;
    nothing structural changes. Before the fallback this file was refused."""
    spec_file = tmp_path / "fixed_image.py"
    spec_file.write_text('''
import torch
import torch.nn as nn

batch_size = 16
num_classes = 10


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 8, stride=8)
        self.fc = nn.Linear(8 * 28 * 28, num_classes)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def get_inputs():
    return [torch.randn(batch_size, 3, 224, 224)]


def get_init_inputs():
    return [num_classes]
''', encoding="utf-8")
    spec = load_spec(spec_file)
    (x,) = spec.cases("test")["case0"]
    assert ELEMENT_CAP < x.numel() <= FALLBACK_ELEMENT_CAP
    assert tuple(x.shape)[1:] == (3, 224, 224) and spec.shrunk["batch_size"][1] < 16
    with torch.no_grad():
        assert spec.reference_cls(*spec.init_args("test")).eval()(x).shape == (x.shape[0], spec.init_args("test")[0])


def test_sizes_equal_by_coincidence_shrink_apart_when_one_of_them_is_pinned(tmp_path: Path) -> None:
    """Batch, channels, height and width are all 32, and a LayerNorm over the last dim pins the width (the
    transposed conv doubles it to the 64 features). Halving "32" everywhere breaks the norm and batch 1 alone
    is still above the cap, so every shared scaling fails; the sizes then shrink one name at a time and the
    width keeps its published value. Before, this file was refused."""
    spec_file = tmp_path / "pinned_width.py"
    spec_file.write_text('''
import torch
import torch.nn as nn

batch_size = 32
channels = 32
depth = 16
height = 32
width = 32
features = 64


class Model(nn.Module):
    def __init__(self, channels, features):
        super().__init__()
        self.up = nn.ConvTranspose3d(channels, features, 2, stride=2)
        self.norm = nn.LayerNorm(features)

    def forward(self, x):
        return self.norm(self.up(x))


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [channels, features]
''', encoding="utf-8")
    spec = load_spec(spec_file)
    (x,) = spec.cases("test")["case0"]
    assert x.numel() <= ELEMENT_CAP and x.shape[-1] == 32 and "width" not in spec.shrunk
    with torch.no_grad():
        out = spec.reference_cls(*spec.init_args("test")).eval()(x)
    assert out.shape[-1] == 64


def test_a_simulated_check_falls_back_to_the_plain_test_case_over_the_parameter_cap() -> None:
    """Keeping the constructor args would check a 0.9-billion-parameter linear layer on the interpreter: the
    simulated target's case is then the plain test case (its draft may then refuse a pinned size in one line)."""
    spec = load_spec(SPECS / "kernelbench_big_linear_conv.py")
    assert spec.init_args("sim") == spec.init_args("test") != spec.init_args("prod")
    assert spec.shrunk_for("sim") == spec.shrunk


def test_one_decision_says_which_cases_a_target_checks_and_the_lowering_drafts_for(tmp_path: Path) -> None:
    """``Target.checked_cases`` is the one place: the executor's job and the lowering's trace agree on it."""
    from interpreters.executor import LocalExecutor
    from interpreters.targets import get_target
    from kernelevolve.lowering import checked_cases

    h100, mtia, cpu = get_target("h100"), get_target("mtia-v3"), get_target("cpu")
    assert (h100.checked_cases(False), h100.checked_cases(True)) == ("prod", "sim")
    assert (mtia.checked_cases(mtia.always_simulated), cpu.checked_cases(False)) == ("sim", "test")
    assert [checked_cases(t) for t in ("h100", "mtia-v3", "cpu", "")] == ["prod", "sim", "test", "test"]
    seen = {}
    for target, simulate in (("cpu", False), ("mtia-v3", False), ("h100", True)):
        executor = LocalExecutor(get_target(target), tmp_path / target / "scratch", simulate=simulate)
        executor._worker.evaluate = lambda job: job  # the job the worker would be sent (no worker is started)
        seen[target] = executor.evaluate(tmp_path / "spec.py", "x = 1", final=False).which
    assert seen == {"cpu": "test", "mtia-v3": "sim", "h100": "sim"}
