"""The one model of a job and of a jobs list, which every front end renders and none re-derives.

* :mod:`.reasons` -- why a replica failed, in the words every front end shows.
* :mod:`.sweep_names` -- which sweep an app belongs to, from its name alone.
* :mod:`.usage_table` -- ``job.usage()`` as a table of replicas.
"""
