"""``kernelevolve.api`` called directly, as a script or the MCP server calls it: no click, no subprocess. Plain
arguments in, plain data out, and bad input refused with the line ``ke`` prints (issue #32 item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT

from kernelevolve import api
from kernelevolve.errors import UserError

SWISH = Path(REPO_ROOT) / "knowledge_base" / "code_samples" / "swish.py"


class Recorder:
    """A progress display that keeps what it was told: the api's only way to report while it works."""

    def __init__(self) -> None:
        self.labels: list[str] = []
        self.counts: list[int] = []
        self.closed = False

    def track(self, label: str, total: int, done: int = 0):
        self.labels.append(label)
        return lambda node, count, total_, best: self.counts.append(count)

    def note(self, message: str) -> None:
        self.labels.append(message)

    def close(self) -> None:
        self.closed = True


def test_search_returns_its_summary_and_export_writes_the_best(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    shown = Recorder()
    summary = api.search(op="swish", hw="cpu", budget=2, drafts=1, executor="local", reuse=False,
                         state_dir=state, progress=lambda: shown)
    assert summary["status"] == "completed" and summary["nodes"] == 2 and summary["executor"] == "local"
    assert summary["best"] is not None and summary["best"]["fitness"] > 0, summary
    assert shown.labels == [f"swish@cpu greedy [{summary['run_id']}]"] and shown.counts == [1, 2] and shown.closed
    written = api.export(summary["run_id"][:6], str(tmp_path / "kernel.py"), state_dir=state)
    payload = written.to_dict()
    assert payload["run_id"] == summary["run_id"] and payload["node_id"] == summary["best"]["node_id"]
    assert (tmp_path / "kernel.py").is_file() and payload["files"][0] == str(tmp_path / "kernel.py")


@pytest.mark.parametrize(("options", "message"), [
    ({"op": "swish", "hw": "cpu", "budget": 0}, "--budget must be a positive integer, got 0"),
    ({"op": "swish", "hw": "cpu", "strategy": "nope"}, "unknown strategy 'nope'"),
    ({"op": "swish"}, "ke search needs --op and --hw (or --resume RUN)"),
    ({"op": "swish", "hw": "nope"}, "unknown hardware target 'nope'"),
])
def test_bad_search_input_is_the_cli_line_and_writes_nothing(tmp_path: Path, options: dict, message: str) -> None:
    with pytest.raises(UserError) as caught:
        api.search(**options, executor="local", state_dir=str(tmp_path / "state"))
    assert str(caught.value).startswith(message)
    assert not (tmp_path / "state").exists()


def test_evaluate_a_knowledge_base_sample_as_the_mcp_server_does(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Source text and a scratch folder of its own: no state directory (default: ./.kernelevolve) is created."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KE_STATE_DIR", raising=False)
    evaluation = api.evaluate("swish", "cpu", source=SWISH.read_text(), scratch=tmp_path / "scratch")
    assert evaluation.result.status == "ok"
    assert evaluation.to_dict()["status"] == "ok" and (evaluation.op, evaluation.candidate) == ("swish", None)
    assert evaluation.result.extra["seeds"] == [0, 1, 2]  # a search's check, unless fewer are asked for
    assert not (tmp_path / ".kernelevolve").exists()


def test_evaluate_refuses_bad_input_before_any_evaluation(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--timeout must be positive, got 0"):
        api.evaluate("swish", "cpu", SWISH, timeout_s=0, state_dir=str(tmp_path / "state"))
    with pytest.raises(UserError, match="unknown op 'nope'"):
        api.evaluate("nope", "cpu", source="x = 1", scratch=tmp_path / "scratch")
    assert not (tmp_path / "state").exists() and not (tmp_path / "scratch").exists()
