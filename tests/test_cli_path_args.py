"""Every command's path and URL arguments, each given every kind of bad value (issue #18).

For each (command, argument) slot and each kind of bad value that is bad *for that argument* (a missing
state directory is created on demand, an existing file is what ``--out`` overwrites), ``ke`` must exit 2
with exactly one ``ke: error:`` line, no traceback, and leave the whole test folder (a real state directory
with its DuckDB file and local artifact store, and the bad inputs themselves) byte-for-byte and
mtime-for-mtime unchanged. A slot's cases run a few at a time: each is a short-lived process that fails
before any torch-heavy work.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_ke

KINDS = ("missing", "directory", "binary", "empty", "non_utf8_name", "unknown_scheme", "unreachable_s3")
NOT_UTF8 = os.fsdecode(b"bad\xffname")  # what Python makes of a non-UTF-8 argv byte (surrogateescape)


@dataclass(frozen=True)
class World:
    root: Path
    state: Path
    candidate: Path
    campaign: Path
    out: Path
    env: dict[str, str]


def _closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again on leaving: nothing answers there


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    from kernelevolve.store.metadata import MetadataStore
    from kernelevolve.store.objects import ObjectStore

    root = tmp_path_factory.mktemp("walk")
    state = root / "state"
    MetadataStore(state / "ke.duckdb")  # a real, valid state: the schema and one artifact
    ObjectStore(str(state / "artifacts")).put_text("specs/kept.py", "x = 1\n")
    spec = (Path(REPO_ROOT) / "kernelevolve" / "builtin_specs" / "swish.py").read_text()
    candidate = root / "candidate.py"
    candidate.write_text((Path(REPO_ROOT) / "knowledge_base" / "code_samples" / "swish.py").read_text())
    campaign = root / "walk.toml"
    campaign.write_text('name = "walk"\n[[runs]]\nop = "swish"\nhw = "cpu"\nbudget = 1\n')
    (root / "a_dir").mkdir()
    data = random.Random(18).randbytes(300)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    (root / "binary.py").write_bytes(data)
    (root / "empty.py").write_bytes(b"")
    # names that are not UTF-8, each holding something valid, so only the name is wrong
    bad = os.fsencode(root) + b"/" + os.fsencode(NOT_UTF8)
    with open(bad + b".py", "w") as fh:
        fh.write(spec)
    with open(bad + b"_cand.py", "w") as fh:
        fh.write(candidate.read_text())
    with open(bad + b".toml", "w") as fh:
        fh.write(campaign.read_text())
    os.mkdir(bad + b"_dir")
    shutil.copytree(Path(REPO_ROOT) / "knowledge_base", os.fsdecode(bad + b"_kb"))
    env = {"KE_S3_ENDPOINT_URL": f"http://127.0.0.1:{_closed_loopback_port()}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1", "KE_STATE_DIR": "",
           "KE_STORE_URL": "", "KE_KB_DIR": "", "KE_CODE_ROOTS": "", "AWS_ENDPOINT_URL": ""}
    return World(root, state, candidate, campaign, root / "out.py", env)


def bad_value(world: World, role: str, kind: str) -> str | None:
    """The bad value of ``kind`` for an argument of ``role``; None where that kind is valid input for it."""
    r = world.root
    bad = f"{r}/{NOT_UTF8}"
    table: dict[str, dict[str, str | None]] = {
        # a spec (--op) or candidate file: UTF-8 Python source
        "spec": {"missing": f"{r}/nothing.py", "directory": f"{r}/a_dir", "binary": f"{r}/binary.py",
                 "empty": f"{r}/empty.py", "non_utf8_name": f"{bad}.py"},
        "candidate": {"missing": f"{r}/nothing.py", "directory": f"{r}/a_dir", "binary": f"{r}/binary.py",
                      "empty": f"{r}/empty.py", "non_utf8_name": f"{bad}_cand.py"},
        "toml": {"missing": f"{r}/nothing.toml", "directory": f"{r}/a_dir", "binary": f"{r}/binary.py",
                 "empty": f"{r}/empty.py", "non_utf8_name": f"{bad}.toml"},
        # an existing folder (--code-root, --kb-dir)
        "dir": {"missing": f"{r}/no_such_dir", "directory": None, "binary": f"{r}/binary.py",
                "empty": f"{r}/empty.py", "non_utf8_name": f"{bad}_dir"},
        "kb": {"missing": f"{r}/no_such_dir", "directory": None, "binary": f"{r}/binary.py",
               "empty": f"{r}/empty.py", "non_utf8_name": f"{bad}_kb"},
        # a file to write: its folder must exist; an existing file is overwritten (valid)
        "out": {"missing": f"{r}/no_such_dir/out.py", "directory": f"{r}/a_dir", "binary": None, "empty": None,
                "non_utf8_name": f"{bad}_out.py"},
        # folders made on demand (missing is valid), which must not be files
        "state": {"missing": None, "directory": None, "binary": f"{r}/binary.py", "empty": f"{r}/empty.py",
                  "non_utf8_name": f"{bad}_dir"},
    }
    table["store"] = table["state"]
    table["roots"] = table["dir"]  # KE_CODE_ROOTS is split on ':' like PATH, so a URL there is no URL
    if kind == "unknown_scheme":
        return "ftpx://x/y.py"
    if kind == "unreachable_s3":
        return "s3://ke-unreachable/prefix"
    return table[role][kind]


# (slot id, argv with {} for the value under test, role); {S} the state dir, {C} a valid candidate,
# {T} a valid campaign file, {O} a valid output path. Every click.option/argument that is a path or a URL.
STATEFUL = {
    "search": ["search", "--op", "swish", "--hw", "cpu", "--budget", "1"],
    "eval": ["eval", "--op", "swish", "--hw", "cpu", "{C}"],
    "campaign": ["campaign", "{T}"],
    "aten-sweep": ["aten-sweep", "--hw", "cpu", "--ops", "abs*"],
    "runs": ["runs"],
    "show": ["show", "deadbeef"],
    "best": ["best", "deadbeef", "--out", "{O}"],
    "mcp": ["mcp"],
}
SLOTS: list[tuple[str, list[str], str]] = [
    ("search --op", ["search", "--op", "{}", "--hw", "cpu", "--state-dir", "{S}"], "spec"),
    ("eval --op", ["eval", "--op", "{}", "--hw", "cpu", "{C}", "--state-dir", "{S}"], "spec"),
    ("eval CANDIDATE", ["eval", "--op", "swish", "--hw", "cpu", "{}", "--state-dir", "{S}"], "candidate"),
    ("campaign FILE", ["campaign", "{}", "--state-dir", "{S}"], "toml"),
    ("search --code-root", ["search", "--op", "swish", "--hw", "cpu", "--code-root", "{}", "--state-dir", "{S}"],
     "dir"),
    ("kb search --code-root", ["kb", "search", "q", "--grep", "--code-root", "{}"], "dir"),
    ("kb index --kb-dir", ["kb", "index", "--kb-dir", "{}"], "kb"),
    ("kb check --kb-dir", ["kb", "check", "--no-samples", "--kb-dir", "{}"], "kb"),
    ("kb search --kb-dir", ["kb", "search", "q", "--kb-dir", "{}"], "kb"),
    ("mcp --kb-dir", ["mcp", "--kb-dir", "{}", "--state-dir", "{S}"], "kb"),
    ("best --out", ["best", "deadbeef", "--out", "{}", "--state-dir", "{S}"], "out"),
    ("aten-sweep --out", ["aten-sweep", "--hw", "cpu", "--ops", "abs*", "--out", "{}", "--state-dir", "{S}"], "out"),
    *[(f"{name} --state-dir", [*argv, "--state-dir", "{}"], "state") for name, argv in STATEFUL.items()],
    *[(f"{name} --store-url", [*argv, "--state-dir", "{S}", "--store-url", "{}"], "store")
      for name, argv in STATEFUL.items()],
]
ENV_SLOTS: list[tuple[str, list[str], str, str]] = [  # the same arguments given through the environment
    ("KE_STORE_URL", ["search", "--op", "swish", "--hw", "cpu", "--state-dir", "{S}"], "KE_STORE_URL", "store"),
    ("KE_STATE_DIR", ["runs"], "KE_STATE_DIR", "state"),
    ("KE_KB_DIR", ["kb", "search", "q"], "KE_KB_DIR", "kb"),
    ("KE_CODE_ROOTS", ["kb", "search", "q", "--grep"], "KE_CODE_ROOTS", "roots"),
]


def expected(role: str, kind: str) -> str:
    """What the one error line must say, so a case cannot pass by failing for another reason (an unknown
    run, a missing state) after accepting the bad value."""
    folder = role in ("dir", "kb", "state", "store", "roots")
    if role == "roots" and kind in ("unknown_scheme", "unreachable_s3"):
        return "is not a directory"
    return {
        "missing": "does not exist",
        "directory": "is a directory",
        "binary": "is not a directory" if folder else "is not UTF-8",
        "empty": "is not a directory" if folder else "is empty",
        "non_utf8_name": "name is not valid UTF-8",
        "unknown_scheme": "unknown scheme 'ftpx'" if role == "store" else "is a URL; a local path is expected",
        "unreachable_s3": "cannot be reached" if role == "store" else "is a URL; a local path is expected",
    }[kind]


def snapshot(root: Path) -> dict[bytes, tuple[bool, int, int]]:
    """Every entry under ``root`` (names as bytes: some are not UTF-8) -> (is a dir, size, mtime_ns)."""
    out = {}
    for dirpath, dirs, files in os.walk(os.fsencode(root)):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[path] = (os.path.isdir(path), st.st_size, st.st_mtime_ns)
    return out


def _fill(argv: list[str], world: World, value: str) -> list[str]:
    subs = {"{S}": str(world.state), "{C}": str(world.candidate), "{T}": str(world.campaign),
            "{O}": str(world.out), "{}": value}
    return [subs.get(a, a) for a in argv]


def _check_slot(world: World, role: str, cases: list[tuple[str, list[str], dict[str, str]]]) -> None:
    """Run a slot's cases (a few at a time) and hold each to the bad-input contract."""
    before = snapshot(world.root)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda c: run_ke(*c[1], env={**world.env, **c[2]}, timeout=120,
                                                 cwd=str(world.root)), cases))
    for (kind, argv, _), result in zip(cases, results, strict=True):
        where = f"{kind}: ke {' '.join(argv)}"
        kind = kind.split("=")[-1]
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, f"{where}: exit {result.returncode}, stderr {result.stderr[-2000:]}"
        assert len(lines) == 1 and lines[0].startswith("ke: error:"), f"{where}: {result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr and expected(role, kind) in lines[0], f"{where}: {lines[0]}"
    after = snapshot(world.root)
    changed = sorted(set(before.items()) ^ set(after.items()))
    assert not changed, f"bad input changed files: {changed[:5]}"


@pytest.mark.parametrize(("argv", "role"), [pytest.param(a, r, id=i) for i, a, r in SLOTS])
def test_every_bad_value_of_every_path_argument(world: World, argv: list[str], role: str) -> None:
    cases = []
    for kind in KINDS:
        value = bad_value(world, role, kind)
        if value is not None:
            cases.append((kind, _fill(argv, world, value), {}))
    assert len(cases) >= 5
    _check_slot(world, role, cases)


@pytest.mark.parametrize(("argv", "variable", "role"), [pytest.param(a, v, r, id=i) for i, a, v, r in ENV_SLOTS])
def test_every_bad_value_of_every_path_variable(world: World, argv: list[str], variable: str, role: str) -> None:
    cases = [(f"{variable}={kind}", _fill(argv, world, ""), {variable: value}) for kind in KINDS
             if (value := bad_value(world, role, kind)) is not None]
    assert len(cases) >= 5  # as for the arguments: an empty walk would pass having checked nothing
    _check_slot(world, role, cases)


def test_the_state_used_by_the_walk_is_valid(world: World) -> None:
    """So the failures above come from the values under test, not from a broken state directory."""
    for store in (str(world.state / "artifacts"), f"file://{world.state}/artifacts"):
        result = run_ke("runs", "--state-dir", str(world.state), "--store-url", store, "--json", env=world.env,
                        cwd=str(world.root))
        assert result.returncode == 0 and result.json() == {"runs": []}, result.stderr
