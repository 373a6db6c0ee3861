"""The ``ke`` command line (docs/architecture.md §10)."""
