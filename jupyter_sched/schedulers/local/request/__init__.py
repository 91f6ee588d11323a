"""What a local submit asks for, before anything starts (``dryrun`` shows it; ``processes/`` runs it).

- ``opts``: the run options (TorchX's ``LocalOpts``) and their declaration.
- ``popen``: the request: what each replica's ``Popen`` gets (``env`` and ``launch_env``), its dry-run view.
- ``build``: AppDef + run options -> the request: per replica its argv, environment, directory and log files.
- ``images``: the image providers of ``local_cwd`` and ``local_dir`` (a role's image -> a directory).
"""
