"""What counts as a URL, and how a store URL is normalised or refused (kernelevolve/inputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelevolve.inputs import InputError, is_url, store_url


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("s3://bucket/x", True), ("s3:/bucket", True), ("s4://bucket", True), ("file:///tmp/x", True),
        ("git+ssh://host/x", True), ("S3://Bucket", True),
        ("runs/a:b", False), ("a:b", False), ("/abs/s3:/x", False), ("./s3://x", False), ("3s://x", False),
        ("relative/dir", False), ("~/store", False),
    ],
)
def test_a_url_is_a_scheme_a_colon_and_a_slash(text: str, url: bool) -> None:
    assert is_url(text) is url


def test_store_urls_are_normalised_and_local_paths_kept(tmp_path: Path) -> None:
    assert store_url("S3://bucket/prefix") == "s3://bucket/prefix"
    assert store_url(f"file://{tmp_path}/a") == f"file://{tmp_path}/a"
    assert store_url(str(tmp_path / "new" / "store")) == str(tmp_path / "new" / "store")
    assert store_url("runs/a:b") == "runs/a:b"  # a colon without a slash after it: a local folder


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("s4://b", "unknown scheme 's4'"), ("s3:/b", "is malformed"), ("s3:///b", "names no bucket"),
        ("memory://x", "does not support 'memory'"), ("file:/x", "is malformed: expected file:///PATH"),
    ],
)
def test_bad_store_urls_name_the_supported_forms(url: str, fragment: str) -> None:
    with pytest.raises(InputError) as err:
        store_url(url, "--store-url")
    assert fragment in str(err.value) and "(from --store-url)" in str(err.value)
