"""``-s torchx:<name>``: TorchX's installed schedulers behind our interface.

Needs ``pip install jupyter_sched[torchx]``.

- ``scheduler``: the bridge, and the factories the registry's ``torchx:`` prefix lists.
- ``convert``: AppDefs, states and responses, both ways.
- ``text``: a dry run as TorchX renders it.
- ``poll``: following a log the backend cannot tail, by reading it whole at an interval.
- ``ray``: TorchX's Ray scheduler: the job's working directory, which the bridge owns.
"""
