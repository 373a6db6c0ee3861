"""One forward of a candidate on one case, for Nsight Compute to profile: ``python -m evaluators.ncu_driver
SPEC CANDIDATE CASE``. A warm-up call compiles the kernels first; ncu profiles only the launches inside the
NVTX range around the second call, so input generation and compilation stay out of the metrics."""

from __future__ import annotations

import sys

import torch

from evaluators.candidate import build_pair, load_candidate_class
from evaluators.correctness import make_inputs
from evaluators.spec import load_spec

NVTX_RANGE = "ke_candidate"


def main(spec_path: str, candidate_path: str, case: str) -> None:
    spec = load_spec(spec_path)
    _, candidate = build_pair(spec, load_candidate_class(candidate_path), 0, "cuda")
    inputs = make_inputs(spec, "prod", "cuda", 0)[case]
    with torch.no_grad():
        candidate(*inputs)  # compiles; outside the NVTX range, so ncu skips it
        torch.cuda.synchronize()
        with torch.cuda.nvtx.range(NVTX_RANGE):
            candidate(*inputs)
        torch.cuda.synchronize()


if __name__ == "__main__":
    main(*sys.argv[1:4])
