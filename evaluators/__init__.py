"""What "evaluate a candidate" means. Imports only torch, triton, numpy and the standard library,
so this package runs alone on any GPU host."""

EVALUATOR_VERSION = "0.1.0"
