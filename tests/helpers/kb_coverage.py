"""Which test runs which knowledge-base code sample, in one place, so a test can prove that every sample is
run by one (and CI's ``ke kb check`` need not run them all a second time)."""

from __future__ import annotations

# sample stem -> (op spec, its expected tunables): checked in-process against the spec (test_seed_kernels.py)
SEED_SAMPLES = {
    "swish": ("swish", {"BLOCK_SIZE", "NUM_WARPS", "NUM_STAGES"}),
    "softmax": ("softmax", {"NUM_WARPS", "NUM_STAGES", "ROWS_PER_PROGRAM"}),
    "softmax_looped": ("softmax", {"BLOCK_SIZE", "NUM_WARPS", "NUM_STAGES"}),
    "conv1d": ("conv1d", {"BLOCK_L", "BLOCK_CO", "BLOCK_CI", "NUM_WARPS", "NUM_STAGES"}),
}

# sample file -> (op, the tunables the offline operator must find in it): through ``ke eval`` (test_kb_samples.py)
EVAL_SAMPLES = {
    "rmsnorm.py": ("rmsnorm", {"NUM_WARPS", "NUM_STAGES", "ROWS_PER_PROGRAM"}),
    "layernorm.py": ("layernorm", {"NUM_WARPS", "NUM_STAGES", "ROWS_PER_PROGRAM"}),
    "layernorm_looped.py": ("layernorm", {"BLOCK_SIZE", "NUM_WARPS", "NUM_STAGES"}),
    "matmul_tiled.py": ("matmul", {"BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_WARPS", "NUM_STAGES"}),
    "matmul.py": ("matmul", {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "NUM_WARPS", "NUM_STAGES"}),
    "gelu.py": ("gelu", {"BLOCK_SIZE", "NUM_WARPS", "NUM_STAGES"}),
    "add_bias_relu.py": ("add_bias_relu", {"BLOCK_M", "BLOCK_N", "NUM_WARPS", "NUM_STAGES"}),
    "sum_rows.py": ("sum_rows", {"BLOCK_SIZE", "ROWS_PER_PROGRAM", "NUM_WARPS", "NUM_STAGES"}),
}

# every sample of these ops, on cpu and mtia-v3 (test_case_study_ops.py)
CASE_STUDY_OPS = ("conv1d", "optimized_fm", "pffn", "mapid", "mbdt", "batch_event_truncate", "rmsnorm_backward")
