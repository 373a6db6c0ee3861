"""Content identity: a candidate (or spec) is its source text, hashed."""

from __future__ import annotations

import hashlib


def source_hash(text: str) -> str:
    """SHA-256 of the exact source; identical sources are evaluated once per (spec, target, version)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
