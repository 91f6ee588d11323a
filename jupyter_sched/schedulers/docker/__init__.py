"""The docker backend's machinery (``local_docker``): each replica is a container on the local Docker engine.

The scheduler class stays at TorchX's module path, :mod:`jupyter_sched.schedulers.docker_scheduler`; this
package holds what it delegates to. The modules at the top are the engine, the labels and the verbs that change apps;
the rooms hold the request, the record and the logs:

- ``engine``: the engine client (made lazily, errors that say how to start one), images under a pull policy,
  the shared network, a small parallel map.
- ``labels``: what marks the engine's objects as ours: the labels every container, network and image carries,
  from which any process reads an app back.
- ``launch``: ``schedule``, all or nothing: images, the app's metrics directory, then create every container,
  then start them.
- ``interrupted``: undoing a submit whose submitter was killed half-way, by whoever reads the app next.
- ``cancel``: the cancel record any process sees, then the stop requests.
- ``cleanup``: removing what apps leave behind: containers, metrics directories, workspace images only they
  used, the network.
- ``workspace``: workspace images: a directory or fsspec URL overlaid on a role's image, built, maybe pushed.
- ``oom``: an out-of-memory kill the engine's ``OOMKilled`` flag missed, read from its event log.
- ``usage``: the engine's stats stream, one connection per running container, and the totals kept after.
- ``request/``: the request and its labels (pure data), built from an AppDef, checked before anything runs,
  and shown (repr, ``docker run`` lines, the dry-run view).
- ``record/``: what ``describe`` and ``list`` answer, from the containers' rows and labels (pure).
- ``logs/``: reading a container's log: the history, the live stream, and the seam between them.
"""
