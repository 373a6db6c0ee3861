"""Specs by content hash: a request names its spec by file name and the hash of its text, and the text crosses
to each slot once.

Why: requests used to carry the whole spec text, which every slot hashed again per evaluation and a Ray actor
received again with every request (issue #32: the spec was read and shipped again and again). Now a run reads
its spec once and shelves it here (:func:`shelve`); requests carry a :class:`SpecRef`; a local slot reads the
shelf of its own process, and a Ray slot sends the text with the first request its actor sees of that hash,
which the actor shelves on its side. On disk a spec is written once per scratch folder, under its hash.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from evaluators.identity import source_hash


@dataclass(frozen=True)
class SpecRef:
    """A spec by content: ``name`` is its file name (so messages and loaders see the same name everywhere),
    ``hash`` the :func:`source_hash` of its text."""

    name: str
    hash: str


_SHELF: dict[str, str] = {}  # hash -> text, for every spec this process evaluates
_LOCK = threading.Lock()


def shelve(name: str, text: str) -> SpecRef:
    """Keep ``text`` in this process and return the reference requests carry."""
    ref = SpecRef(name, source_hash(text))
    _keep(ref, text)
    return ref


def shelve_received(ref: SpecRef, text: str) -> None:
    """Shelve a text sent from another process, refusing one that is not the text ``ref`` names."""
    if source_hash(text) != ref.hash:
        raise ValueError(f"spec {ref.name}: the text received does not hash to {ref.hash[:16]}")
    _keep(ref, text)


def _keep(ref: SpecRef, text: str) -> None:
    with _LOCK:
        _SHELF[ref.hash] = text


def text_of(ref: SpecRef) -> str:
    with _LOCK:
        text = _SHELF.get(ref.hash)
    if text is None:
        raise LookupError(f"spec {ref.name} ({ref.hash[:16]}) was never shelved in this process")
    return text


def materialize(root: Path, ref: SpecRef) -> Path:
    """The spec as a file under ``root``, written once per hash (content-addressed, so concurrent-safe)."""
    folder = root / "specs" / ref.hash[:16]
    path = folder / ref.name
    if not path.is_file():  # the folder is named by the text's hash and writes are atomic: present = same text
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{ref.name}.{threading.get_ident()}.tmp"
        tmp.write_text(text_of(ref), encoding="utf-8")
        tmp.replace(path)
    return path
