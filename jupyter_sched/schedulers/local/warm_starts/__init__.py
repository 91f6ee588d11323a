"""Warm starts: local replicas forked from a zygote (a warm Python) instead of exec'ing a new interpreter.

- ``zygote``: the owner's side: which replicas may start warm, the pool of zygotes, and the exec fallback.
- ``zygote_server``: the zygote itself, stdlib-only and started by its file path (``python zygote_server.py``)
  from beside ``zygote``: it preloads what a role asks for and forks replicas on request.
"""
