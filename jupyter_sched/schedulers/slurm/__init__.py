"""The Slurm backend's machinery (``slurm``): an app is one heterogeneous batch job, a replica one component.

The scheduler class stays at TorchX's module path, :mod:`jupyter_sched.schedulers.slurm_scheduler`; this package
holds what it delegates to: ``opts`` (run options), ``batch`` and ``request`` (the batch request
and its script), ``fit`` and ``submit`` (the capacity check and ``sbatch``), ``files`` (the app directory and
the session's index), ``cli`` (Slurm's commands and their output), ``job`` and ``status`` (reading a job),
``logs`` and ``usage``. ``slurm_replica.py`` keeps its name: it is copied into each app's directory under that
name and runs on the node with the standard library only.
"""
