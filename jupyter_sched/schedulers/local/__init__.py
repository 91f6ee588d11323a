"""The local backend's machinery (``local_cwd``, ``local_dir``): each replica is a process on this machine.

The scheduler class stays at TorchX's module path, :mod:`jupyter_sched.schedulers.local_scheduler`; this
package holds what it delegates to: ``opts`` (run options), ``request`` and ``build`` (the request),
``images`` (the image providers of ``local_cwd``/``local_dir``), ``owned`` (starting an app and hearing its
replicas end), ``spawn``, ``procs``, ``groups``, ``sinks`` and ``posix`` (processes, their groups and their
output), ``state`` (the app's record on disk and TorchX's ``SUCCESS`` marker), ``describe``, ``cancel``,
``logs``, ``reaper`` and ``signals`` (replicas end with their owner), ``detached`` (a replica that outlives
it), ``limit``, ``meter``, ``usage`` and ``gpu_usage`` (memory limits and resource usage).
"""
