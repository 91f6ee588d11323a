"""What a user asks for, before anything runs: the application model and everything a request carries.

* :mod:`.app` -- ``AppDef``, ``Role``, ``RetryPolicy``, macros and validation.
* :mod:`.mounts` -- bind mounts, volumes and devices, and their docker-like token syntax.
* :mod:`.resources`, :mod:`.resource_table` -- what a replica asks for, and the table of named resources.
* :mod:`.limits` -- how many replicas an app may ask for.
* :mod:`.runopts` -- run options: what a scheduler accepts as ``cfg``, and the ``k=v,k2=v2`` form.
* :mod:`.dryrun` -- the neutral view of a request that front ends and components read.
"""
