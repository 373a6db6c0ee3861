"""ObjectStore against a local folder and a real (moto, over HTTP) S3 endpoint."""

from __future__ import annotations

import hashlib
import json
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from kernelevolve.store.objects import ObjectStore, StoreError

KERNEL = "import triton\n\n@triton.jit\ndef k(x_ptr):\n    pass  # π\n"


@pytest.fixture(params=["local", "s3"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "local":
        return str(tmp_path / "artifacts")
    return request.getfixturevalue("s3_bucket")


@pytest.fixture
def store(store_url: str) -> ObjectStore:
    return ObjectStore(store_url)


def _one_line(exc: pytest.ExceptionInfo[StoreError]) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def test_text_and_json_round_trip(store: ObjectStore) -> None:
    store.put_text("runs/r1/nodes/000001/overview.md", "# Node 1\nfaster ✓\n")
    assert store.get_text("runs/r1/nodes/000001/overview.md") == "# Node 1\nfaster ✓\n"
    payload = {"fitness": 1.5, "cases": [{"shape": [4, 8], "ok": True}], "path": Path("/x")}
    store.put_json("runs/r1/nodes/000001/evaluation.json", payload)
    got = store.get_json("runs/r1/nodes/000001/evaluation.json")
    assert got == {"fitness": 1.5, "cases": [{"shape": [4, 8], "ok": True}], "path": "/x"}
    text = store.get_text("runs/r1/nodes/000001/evaluation.json")
    assert text.index('"cases"') < text.index('"fitness"')  # sort_keys, indent=2
    store.put_text("runs/r1/nodes/000001/overview.md", "rewritten")
    assert store.get_text("runs/r1/nodes/000001/overview.md") == "rewritten"


def test_put_kernel_is_content_addressed_and_idempotent(store: ObjectStore) -> None:
    ref = store.put_kernel(KERNEL)
    assert ref == f"kernels/{hashlib.sha256(KERNEL.encode()).hexdigest()}.py"
    assert store.put_kernel(KERNEL) == ref
    assert store.list("kernels/") == [ref]
    assert store.get_text(ref) == KERNEL
    other = store.put_kernel(KERNEL + "# variant\n")
    assert other != ref and store.list("kernels/") == sorted([ref, other])


def test_list_finds_node_artifacts(store: ObjectStore) -> None:
    node3 = ObjectStore.node_prefix("r1", 3)
    assert node3 == "runs/r1/nodes/000003/"
    for name in ("evaluation.json", "prompt.txt", "profile/ncu.txt"):
        store.put_text(node3 + name, name)
    store.put_text(ObjectStore.node_prefix("r1", 30) + "evaluation.json", "{}")
    store.put_text(ObjectStore.node_prefix("r2", 3) + "evaluation.json", "{}")
    store.put_kernel(KERNEL)
    assert store.list(node3) == [node3 + "evaluation.json", node3 + "profile/ncu.txt", node3 + "prompt.txt"]
    assert len(store.list("runs/r1/")) == 4
    assert len(store.list()) == 6
    assert store.list("runs/none/") == []
    assert store.exists(node3 + "prompt.txt") and not store.exists(node3 + "absent.txt")


def test_missing_ref_raises_store_error(store: ObjectStore) -> None:
    with pytest.raises(StoreError) as exc:
        store.get_text("runs/r1/nodes/000009/evaluation.json")
    assert _one_line(exc) == f"artifact runs/r1/nodes/000009/evaluation.json missing from {store.url}"
    with pytest.raises(StoreError):
        store.get_json("runs/r1/nodes/000009/evaluation.json")


@pytest.mark.parametrize("ref", ["../escape.txt", "runs/../../etc/passwd", "/etc/passwd", "a/..", ""])
def test_unsafe_refs_are_rejected(store: ObjectStore, ref: str) -> None:
    with pytest.raises(ValueError):
        store.put_text(ref, "x")
    with pytest.raises(ValueError):
        store.get_text(ref)
    with pytest.raises(ValueError):
        store.exists(ref)
    if ref:
        with pytest.raises(ValueError):
            store.list(ref)


def test_check_writable_on_good_store(store: ObjectStore) -> None:
    store.check_writable()
    store.check_writable()
    assert store.list() == []  # the probe leaves nothing behind


def test_check_writable_local_unwritable(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a directory")
    store = ObjectStore(str(tmp_path / "afile" / "sub"))
    with pytest.raises(StoreError) as exc:
        store.check_writable()
    assert _one_line(exc).startswith(f"artifact store {tmp_path / 'afile' / 'sub'} is not writable: ")


def test_check_writable_missing_bucket(s3_bucket: str) -> None:
    url = f"s3://ke-missing-{uuid.uuid4().hex[:12]}/ke"
    with pytest.raises(StoreError) as exc:
        ObjectStore(url).check_writable()
    msg = _one_line(exc)
    assert msg.startswith(f"artifact store {url} is not writable: ")
    assert "bucket" in msg.lower()


def test_second_instance_sees_writes(store_url: str) -> None:
    writer, reader = ObjectStore(store_url), ObjectStore(store_url)
    prefix = ObjectStore.node_prefix("shared", 1)
    writer.put_text(prefix + "a.txt", "a")
    assert reader.list(prefix) == [prefix + "a.txt"]  # primes any listing cache the reader might keep
    assert not reader.exists(prefix + "b.txt")
    writer.put_text(prefix + "b.txt", "b")
    writer.put_text(prefix + "a.txt", "a2")
    assert reader.list(prefix) == [prefix + "a.txt", prefix + "b.txt"]
    assert reader.exists(prefix + "b.txt")
    assert reader.get_text(prefix + "a.txt") == "a2"


def test_s3_data_really_goes_over_http(s3_bucket: str, s3_server) -> None:
    import s3fs

    store = ObjectStore(s3_bucket)
    ref = store.put_kernel(KERNEL)
    bucket_and_prefix = s3_bucket[len("s3://") :]
    fresh = s3fs.S3FileSystem(
        key="testing",
        secret="testing",
        client_kwargs={"endpoint_url": s3_server.endpoint, "region_name": "us-east-1"},
        skip_instance_cache=True,
        use_listings_cache=False,
    )
    assert fresh.cat_file(f"{bucket_and_prefix}/{ref}").decode() == KERNEL
    # And with no AWS client at all: ask the server process for its state over plain HTTP.
    with urllib.request.urlopen(f"{s3_server.endpoint}/moto-api/data.json", timeout=5) as resp:
        keys = json.load(resp)["s3"]["FakeKey"]
    bucket, prefix = bucket_and_prefix.split("/", 1)
    [key] = [k for k in keys if k["bucket_name"] == bucket and k["name"] == f"{prefix}/{ref}"]
    assert key["etag"].strip('"') == hashlib.md5(KERNEL.encode()).hexdigest()


def test_construction_does_no_network_io(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KE_S3_ENDPOINT_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    start = time.monotonic()
    store = ObjectStore("s3://some-bucket/prefix/")
    assert time.monotonic() - start < 0.5
    assert store.url == "s3://some-bucket/prefix"


def test_url_normalisation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ObjectStore("rel/dir").url == str(tmp_path / "rel" / "dir")
    assert ObjectStore(f"file://{tmp_path}/x").url == str(tmp_path / "x")
    local = ObjectStore(f"file://{tmp_path}/x")
    local.put_text("a/b.txt", "hi")
    assert (tmp_path / "x" / "a" / "b.txt").read_text() == "hi"
    assert not [p for p in (tmp_path / "x" / "a").iterdir() if p.name != "b.txt"]  # no temp left
