"""ddplint: find the bugs that make multi-GPU PyTorch training scale badly."""

__version__ = "0.1.0"
