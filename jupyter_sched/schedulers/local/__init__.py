"""The local backend's machinery (``local_cwd``, ``local_dir``): each replica is a process on this machine.

The scheduler class stays at TorchX's module path, :mod:`jupyter_sched.schedulers.local_scheduler`; this
package holds what it delegates to. The two modules at the top are where an app's life is decided; the rooms
hold what they use:

- ``owned``: an app this process started and owns: start all its replicas or none, hear each one end.
- ``cancel``: cancelling an app from any process: the ``cancelled`` marker, then SIGTERM -> SIGKILL.
- ``request/``: what a submit asks for, before anything starts: run options, the request, image providers.
- ``processes/``: replicas as processes: spawning, the IO loop, process groups, the OS calls, the owner's
  signals, the reaper that ends replicas with their owner, the wrapper of a replica that outlives it.
- ``warm_starts/``: replicas forked from a warm zygote instead of exec'd (the function jobs' fast path).
- ``record/``: an app's record on disk (``state.json``, TorchX's ``SUCCESS``) and reading it back from any
  process: find, describe, list.
- ``logs/``: a replica's log files: written by the IO loop, read by ``log_iter``.
- ``usage/``: what a replica uses and may use: the memory limit, the psutil and ``nvidia-smi`` samplers and
  the bookkeeping the scheduler calls. A new kind of usage reading (a live metric) starts here.
"""
