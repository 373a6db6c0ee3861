"""The numerics every evaluation process runs under, set once per process."""

from __future__ import annotations

import os


def configure_numerics() -> None:
    """IEEE fp32 everywhere (references, baselines, candidates): cuDNN's default TF32 alone moves conv1d fp32
    outputs by ~1e-3, ten times the fp32 tolerance. Under the interpreter, autotuners run their first config."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if os.environ.get("TRITON_INTERPRET") == "1":
        from evaluators import interpreter_calls
        from evaluators.guard import install_interpreter_autotune

        install_interpreter_autotune()
        interpreter_calls.install()
