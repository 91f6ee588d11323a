"""jupyter_sched's version, in a leaf module (it imports nothing), so any layer can read it without importing
the package root, which would pull the notebook layer in. TorchX keeps its own at ``torchx.version``."""

__version__ = "0.1.0"
