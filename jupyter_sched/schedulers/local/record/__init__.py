"""A local app's record: what its owner keeps in ``state.json``, and how any process reads it back.

- ``state``: the record (app, roles, replicas with pid, start time, exit and usage), saved atomically, and
  TorchX's ``SUCCESS`` marker.
- ``describe``: finding, describing and listing apps from their records, whichever process started them,
  settling what a dead owner can no longer say.
"""
