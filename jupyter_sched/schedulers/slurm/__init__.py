"""The Slurm backend's machinery (``slurm``): an app is one heterogeneous batch job, a replica one component.

The scheduler class stays at TorchX's module path, :mod:`jupyter_sched.schedulers.slurm_scheduler`; this
package holds what it delegates to:

- ``opts``: the run options.
- ``batch``: an AppDef as one batch job: the mapping, and ``build_request``, which applies it.
- ``request``: what ``schedule`` submits: the request (``SlurmBatchRequest``), its replicas and its script.
- ``fit``: the check, before submitting, that a partition can hold the app at all.
- ``submit``: whether the cluster can hold the app (``sinfo``, briefly cached), then ``sbatch``.
- ``files``: the app's directory and the session's index of apps.
- ``cli``: Slurm's commands (``sbatch``, ``squeue``, ``sacct``, ``scancel``) and their output parsed.
- ``job``: what Slurm says about one job, read into a small model (``SlurmJob`` and its components).
- ``status``: what ``describe`` and ``list`` say, assembled from ``job``.
- ``logs``: a replica's log files: which file, and when the replica is done writing it.
- ``usage``: ``sstat`` for running steps, ``sacct`` (MaxRSS, TotalCPU) after they end.
- ``slurm_replica``: the wrapper each component runs on the node, standard library only; it keeps its name,
  ``slurm_replica.py``, because it is copied into each app's directory under that name.
"""
