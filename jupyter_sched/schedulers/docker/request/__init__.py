"""The docker request: what ``schedule`` will create, built and checked without the engine (pure).

- ``job``: the data: ``DockerContainer`` (TorchX's image, command and SDK kwargs) and ``DockerJob``, and the
  rule by which creating a container adds to its environment.
- ``build``: AppDef + run options -> ``DockerJob``: names, labels, environment, mounts, limits, restarts.
- ``options``: the ``local_docker`` run options (``DockerOpts`` and their help).
- ``devices``: ``Resource.devices`` -> the host device files a container gets.
- ``preflight``: what a dry run can tell will go wrong inside the containers (a script that is only here).
- ``views``: the request shown to people: its ``repr``, ``docker run`` lines, JSON and the dry-run view.
"""
