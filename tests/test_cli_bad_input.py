"""Every bad input: one line on stderr naming the problem, exit code 2, no traceback, nothing written."""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path

import pytest
from helpers.cli_checks import assert_clean_failure

SPECS = Path(__file__).parent / "specs"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--op", "no_such_op", "--hw", "cpu"], "unknown op 'no_such_op'"),
        (["--op", "missing/spec.py", "--hw", "cpu"], "does not exist"),
        (["--op", str(SPECS / "no_reference.py"), "--hw", "cpu"], "defines no reference"),
        (["--op", str(SPECS / "no_get_inputs.py"), "--hw", "cpu"], "defines no get_inputs"),
        (["--op", str(SPECS / "syntax_error.py"), "--hw", "cpu"], "syntax error at line 5"),
        (["--op", "swish", "--hw", "tpu9"], "unknown hardware target 'tpu9'"),
        (["--op", "swish", "--hw", "cpu", "--strategy", "annealing"], "unknown strategy 'annealing'"),
        (["--op", "swish", "--hw", "cpu", "--budget", "0"], "--budget must be a positive integer"),
        (["--op", "swish", "--hw", "cpu", "--budget", "-3"], "--budget must be a positive integer"),
        (["--op", "swish", "--hw", "cpu", "--budget", "many"], "'many' is not a valid integer"),
        (["--op", "swish", "--hw", "h100"], "no NVIDIA H100"),
        (["--op", "conv1d", "--hw", "mi350", "--strategy", "mcts", "--budget", "30"], "no AMD Instinct MI350X"),
        (["--op", "swish", "--hw", "cpu", "--executor", "spark"], "unknown executor 'spark'"),
        (["--op", "swish", "--hw", "cpu", "--executor", "local", "--ray-address", "127.0.0.1:1"],
         "--ray-address needs --executor ray"),
        (["--op", "swish", "--hw", "cpu", "--executor", "ray", "--ray-address", "127.0.0.1:1"],
         "cannot join the Ray cluster at 127.0.0.1:1: nothing answers"),
        (["--op", "swish", "--hw", "cpu", "--concurrency", "0"], "--concurrency must be at least 1"),
        (["--op", "swish", "--hw", "cpu", "--operator", "gpt"], "unknown operator 'gpt'"),
        (["--op", "swish", "--hw", "cpu", "--model", "m"], "--model needs an LLM operator"),
        (["--op", "swish", "--hw", "cpu", "--max-cost", "0"], "--max-cost must be positive"),
        (["--op", "swish", "--hw", "cpu", "--code-root", "/no/such/dir"],
         "code root /no/such/dir (from --code-root) is not a directory"),
    ],
)
def test_search_rejects_bad_input(ke, tmp_path: Path, args: list[str], fragment: str) -> None:
    state = tmp_path / "state"
    result = ke("search", *args, "--state-dir", str(state))
    assert_clean_failure(result, fragment, state)


def test_device_target_without_device_hints_simulate(ke, tmp_path: Path) -> None:
    result = ke("search", "--op", "swish", "--hw", "h100", "--state-dir", str(tmp_path / "s"))
    assert result.returncode == 2
    assert "--simulate" in result.stderr and "ke worker" in result.stderr


def test_unwritable_state_dir(ke, tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    state = blocker / "state"
    result = ke("search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--state-dir", str(state))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "is not writable" in result.stderr
    assert blocker.read_text() == "not a directory"


def test_eval_bad_inputs(ke, tmp_path: Path) -> None:
    state = tmp_path / "state"
    missing = ke("eval", "--op", "swish", "--hw", "cpu", str(tmp_path / "nope.py"), "--state-dir", str(state))
    assert_clean_failure(missing, "candidate file", state)
    bad_timeout = ke("eval", "--op", "swish", "--hw", "cpu", str(SPECS / "no_reference.py"), "--timeout", "0",
                     "--state-dir", str(state))
    assert_clean_failure(bad_timeout, "--timeout must be positive", state)
    no_seeds = ke("eval", "--op", "swish", "--hw", "cpu", str(SPECS / "no_reference.py"), "--seeds", "0",
                  "--state-dir", str(state))
    assert_clean_failure(no_seeds, "--seeds must be between 1 and 16, got 0", state)


def test_show_unknown_run_and_missing_state(ke, tmp_path: Path) -> None:
    result = ke("show", "deadbeef", "--state-dir", str(tmp_path / "empty"))
    assert result.returncode == 2 and "no KernelEvolve state" in result.stderr
    assert not (tmp_path / "empty").exists()


def test_unknown_option_is_one_line(ke, tmp_path: Path) -> None:
    result = ke("search", "--frobnicate", "--state-dir", str(tmp_path))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("ftpx://x/y", "unknown scheme 'ftpx' (supported: s3://BUCKET/PREFIX, file:///PATH or a local folder)"),
        ("s4://bucket", "unknown scheme 's4'"),
        ("s3:/bucket", "s3:/bucket (from --store-url) is malformed: expected s3://BUCKET/PREFIX"),
        ("S3:/bucket", "is malformed"),
        ("s3://", "names no bucket"),
        ("ftp://host/x", "the artifact store does not support 'ftp'"),
        ("gs://bucket/x", "(supported: s3://BUCKET/PREFIX"),  # needs gcsfs, or unsupported where installed
    ],
)
def test_store_url_typo_is_refused_not_taken_as_a_folder(ke, tmp_path: Path, url: str, fragment: str) -> None:
    """Issue #18: `--store-url ftpx://x/y` used to write the run into a folder named `ftpx:/x/y`."""
    state = tmp_path / "state"
    result = ke("search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--store-url", url,
                "--state-dir", str(state), cwd=str(tmp_path))
    assert_clean_failure(result, fragment, state)
    assert os.listdir(tmp_path) == [], "nothing may be created, not even under the current directory"


def test_binary_candidate_is_bad_input(ke, tmp_path: Path) -> None:
    """Issue #18: 300 random bytes as a candidate crashed with an internal UnicodeDecodeError (exit 1)."""
    candidate = tmp_path / "bin.py"
    candidate.write_bytes(random.Random(0).randbytes(300))
    state = tmp_path / "state"
    result = ke("eval", "--op", "swish", "--hw", "cpu", str(candidate), "--state-dir", str(state))
    assert_clean_failure(result, f"candidate file {candidate} is not UTF-8 Python source", state)
    assert not state.exists()


def _closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_s3_endpoint_fails_fast_before_anything_is_written(ke, tmp_path: Path, s3_server) -> None:
    env = {**s3_server.env, "KE_S3_ENDPOINT_URL": f"http://127.0.0.1:{_closed_loopback_port()}"}
    state = tmp_path / "state"
    started = time.monotonic()
    result = ke("search", "--op", "swish", "--hw", "cpu", "--budget", "1", "--store-url", "s3://ke-bucket/runs",
                "--state-dir", str(state), env=env)
    elapsed = time.monotonic() - started
    assert_clean_failure(result, "artifact store s3://ke-bucket/runs at http://127.0.0.1:", state)
    assert "cannot be reached" in result.stderr and not state.exists()
    assert elapsed < 15, f"an unreachable endpoint took {elapsed:.1f} s to report"  # the probe itself: ~1 s


def test_real_s3_store_missing_bucket_and_bad_input_leave_it_unchanged(ke, tmp_path: Path, s3_bucket: str) -> None:
    import s3fs

    from kernelevolve.store.metadata import MetadataStore
    from kernelevolve.store.objects import ObjectStore

    ObjectStore(s3_bucket).put_text("specs/kept.py", "x = 1\n")
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": os.environ["KE_S3_ENDPOINT_URL"]},
                           skip_instance_cache=True, use_listings_cache=False)
    bucket = s3_bucket.split("/")[2]

    def listing() -> dict:
        return {p: (i["size"], i.get("ETag")) for p, i in fs.find(bucket, detail=True).items()}

    before = listing()
    state = tmp_path / "state"
    missing = ke("runs", "--store-url", "s3://ke-no-such-bucket/x", "--state-dir", str(state))
    assert_clean_failure(missing, "bucket 'ke-no-such-bucket' does not exist", state)
    blob = tmp_path / "blob.py"
    blob.write_bytes(random.Random(1).randbytes(300))
    for args in (["search", "--op", str(blob), "--hw", "cpu"], ["eval", "--op", "swish", "--hw", "cpu", str(blob)],
                 ["search", "--op", "swish", "--hw", "cpu", "--code-root", str(blob)]):
        result = ke(*args, "--store-url", s3_bucket, "--state-dir", str(state))
        assert_clean_failure(result, str(blob), state)
    assert not state.exists() and listing() == before
    MetadataStore(state / "ke.duckdb")  # a valid state: the probe lets a reachable bucket through
    ok = ke("runs", "--store-url", s3_bucket, "--state-dir", str(state), "--json")
    assert ok.returncode == 0 and ok.json() == {"runs": []}, ok.stderr
    assert listing() == before


def test_campaign_naming_a_binary_spec_is_refused_before_anything_is_written(ke, tmp_path: Path) -> None:
    blob = tmp_path / "blob.py"
    blob.write_bytes(random.Random(2).randbytes(300))
    plan = tmp_path / "c.toml"
    plan.write_text(f'name = "c"\n[[runs]]\nop = "{blob}"\nhw = "cpu"\n')
    state = tmp_path / "state"
    result = ke("campaign", str(plan), "--state-dir", str(state))
    assert_clean_failure(result, f"run 0 ({blob}@cpu): spec file {blob} is not UTF-8 Python source", state)
    assert not state.exists()
