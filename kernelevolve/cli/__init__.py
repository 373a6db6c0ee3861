"""The ``ke`` command line (DESIGN §8)."""
