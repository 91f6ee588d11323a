"""The extension's life inside a kernel: configuration, the session, its threads and its notes.

* :mod:`.config` -- the traits of ``SchedMagics`` and a snapshot of them for the panes.
* :mod:`.session` -- the notebook's Runner, the jobs it knows, and how an app is found by id or name.
* :mod:`.live` -- the threads unloading stops: tickers that refresh panes, and the panes' log followers.
* :mod:`.comm_thread` -- pane clicks handled while a cell blocks (``--wait``, ``job.wait()``).
* :mod:`.notes` -- the ``jupyter_sched`` logger as a one-line note under the cell, never raw stderr.
"""
