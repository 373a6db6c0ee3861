"""KernelEvolve: search for fast, correct Triton kernels from PyTorch reference operators."""

__version__ = "0.1.0"
