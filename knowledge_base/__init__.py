"""The hierarchical markdown knowledge base and its code samples (data, shipped with the package)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent
