"""Errors the CLI turns into one line on stderr and an exit code (DESIGN §8)."""


class UserError(Exception):
    """Bad input: exit code 2, nothing written."""


class RunFailed(Exception):
    """A run or evaluation that started but did not succeed: exit code 1."""
