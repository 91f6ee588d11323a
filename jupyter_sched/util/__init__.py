"""Small helpers under TorchX's ``torchx.util`` module path, for code written against TorchX.

* :mod:`.entrypoints` -- loading entry points by group (TorchX's ``torchx.util.entrypoints`` contract).
"""
