"""What several backends share: the machinery below the wings, above the contract (``schedulers/api.py``).

- ``log_files``: reading a replica's ``<stream>.log`` with its ``.idx`` time index, as the local backend's IO
  loop and the Slurm replica wrapper write them (and the line and ``\\r`` rules every backend's ``log_iter`` keeps).
- ``workspace_source``: where a workspace's files come from (a local directory or an fsspec URL).
- ``ignore``: ``.dockerignore`` rules as docker reads them (the docker workspace, the Ray bridge's directory).
- ``state_dir``: the per-user state directory (local logs and records, docker usage totals, Slurm job roots).
- ``roles``: the role summaries a backend records beside an app, and the "no such replica" error.
- ``private_files``: 0700 directories and 0600 files whatever the umask (logs and state may hold secrets).
- ``process_identity``: ``host/pid/start``, so another process can tell later whether a submitter is gone.
"""
