"""The docker backend's machinery (``local_docker``): each replica is a container on the local Docker engine.

The scheduler class stays at TorchX's module path, :mod:`jupyter_sched.schedulers.docker_scheduler`; this
package holds what it delegates to: ``job`` (the request: containers, labels, environment), ``views`` (how a
request is shown, its ``docker run`` line too), ``request``, ``devices``, ``preflight`` and ``options``
(building and checking it), ``engine`` (the engine client), ``launch`` (all-or-nothing start), ``state`` and
``describe`` (states from container rows), ``cancel``, ``cleanup``, ``logs``, ``log_source``, ``follow``,
``frames`` and ``seam`` (reading containers' output), ``usage`` (the stats stream), ``workspace`` and
``ignore`` (workspace images).
"""
