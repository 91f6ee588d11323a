"""Local replicas as processes: started, watched, signalled, and ended with their owner.

- ``spawn``: starting an app's replicas (checks before anything starts, the spawn itself, rollback).
- ``procs``: the IO loop: one thread that owns every replica's pipes and exit, copying output to the logs.
- ``groups``: signalling a replica's process group only when it provably is ours; SIGTERM -> SIGKILL.
- ``posix``: the operating-system calls that differ between Linux (epoll, pidfd, /proc) and other systems.
- ``signals``: replicas end with their owner's SIGTERM (and SIGINT outside IPython); its ``SignalException``.
- ``reaper``: a small process that ends an owner's replicas when the owner dies, however it dies.
- ``detached``: the stdlib-only wrapper of a replica that outlives its owner (``outlive_owner``), run as a
  file; it records the exit code and end time beside the logs.
"""
