"""A stand-in for torchvision in verify's tests: only `datasets.MNIST(root, download=True)`, which
writes its archive and extracted files under root as the real one does (when they are missing)."""

from torchvision import datasets  # noqa: F401
