"""Small helpers under TorchX's ``torchx.util`` module path, for code written against TorchX."""
