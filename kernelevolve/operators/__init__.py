"""The universal operator and its backends: ``propose(parent, context) -> proposals``."""
