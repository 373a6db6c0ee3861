"""Helpers shared by the test modules: fixtures' servers, store checks, drafts run by the real evaluator.
Test modules import these, never each other."""
