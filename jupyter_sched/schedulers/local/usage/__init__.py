"""What a local replica uses and may use: its memory limit and its CPU, memory and GPU usage.

- ``meter``: the bookkeeping the scheduler calls: start sampling, totals when a replica ends, ``usage()``.
- ``sampler``: psutil over each replica's process tree, sampled by one thread; ``usage.json`` for others.
- ``gpu_usage``: GPU readings from ``nvidia-smi``, matched to a replica's processes.
- ``limit``: the opt-in ``memory_limit`` (cgroup or rlimit), through which a limited replica is started
  (``python -m``), and the words for a replica that died at it.
"""
