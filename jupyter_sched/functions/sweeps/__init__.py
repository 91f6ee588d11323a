"""Many calls of one function: sweeps over a grid and ``map`` over inputs.

* :mod:`.grid` -- a sweep's grid: keyword dicts as given, or a dict of lists meaning their product.
* :mod:`.sweep` -- ``jupyter_sched.sweep(fn, grid, max_concurrent=N, stop=...)``: one function job per grid point.
* :mod:`.maps` -- ``jupyter_sched.map(fn, items, chunksize=...)``: items in chunks, one app per chunk, one
  result per item (a chunk of one: a sweep over the one argument).
* :mod:`.stopping` -- early stopping: ``MedianStopping``, ``SuccessiveHalving`` or any ``(run, history)`` rule,
  judged on what the runs log with ``jupyter_sched.track``; the stop files the runs see.
* :mod:`.metric_data` -- what the runs logged, as data: ``metrics.<key>`` columns, a long frame, ``best`` by scope.
* :mod:`.table` -- a sweep's runs as data: parameters, state, times, peak memory, result fields, stopped, error.
* :mod:`.retry` -- launching a run again: the same pickled call, a new job directory and app.
* :mod:`.futures` -- function jobs as futures: ``as_completed``, and the items of ``map`` as a list.

A new column of the sweep table (a metric, a notebook's progress) is a field of :mod:`.table`'s row and
of ``jupyter_sched.frontend.jobs``' model, rendered by each front end.
"""
