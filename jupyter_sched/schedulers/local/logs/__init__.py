"""A local replica's log files (``stdout``, ``stderr``, ``combined`` and their time index).

- ``sinks``: the writing side: a log file and its index, appended to by the IO loop, and a full disk contained.
- ``reader``: the reading side: ``log_iter``'s iterator, woken by the IO loop for this process's apps and
  polling for another's.
"""
