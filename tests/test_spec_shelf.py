"""Specs by content hash (issue #32 item 2): a request carries the spec's name and hash, never its text."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from evaluators.identity import source_hash
from interpreters.pools import EvaluationRequest
from interpreters.spec_shelf import SpecRef, materialize, shelve, shelve_received, text_of

TEXT = "import torch\n# a spec's text, long enough to find in a pickle: " + "x" * 64 + "\n"


def test_a_request_carries_the_hash_and_the_shelf_the_text(tmp_path: Path) -> None:
    ref = shelve("tiny.py", TEXT)
    assert ref == SpecRef("tiny.py", source_hash(TEXT)) and text_of(ref) == TEXT
    request = EvaluationRequest("cpu", False, ref, "source")
    assert b"x" * 64 not in pickle.dumps(request)  # what a Ray slot ships per request
    path = materialize(tmp_path, ref)
    assert path.read_text() == TEXT and path.parent.name == ref.hash[:16] and path.name == "tiny.py"
    path.write_text("changed")  # present means written once: the file is not rewritten per evaluation
    assert materialize(tmp_path, ref).read_text() == "changed"


def test_a_text_that_is_not_the_hash_named_is_refused_and_an_unknown_hash_is_named() -> None:
    ref = SpecRef("other.py", source_hash(TEXT + "# another\n"))
    with pytest.raises(ValueError, match="does not hash to"):
        shelve_received(ref, TEXT)
    with pytest.raises(LookupError, match=f"spec other.py \\({ref.hash[:16]}\\) was never shelved"):
        text_of(ref)
    shelve_received(ref, TEXT + "# another\n")
    assert text_of(ref).endswith("# another\n")
