"""``-s torchx:<name>``: TorchX's installed schedulers behind our interface.

``scheduler`` (the bridge and the factories the registry's ``torchx:`` prefix lists), ``convert`` (AppDefs,
states and responses both ways) and ``text`` (a dry run as TorchX renders it). Needs
``pip install jupyter_sched[torchx]``.
"""
