"""jupyter_sched: launch apps (roles x replicas) on a scheduler and watch them live from a notebook.

``%load_ext jupyter_sched`` registers the notebook magics. Importing this package stays light: it pulls in
neither docker nor ipywidgets; those load when a docker job or a widget is first used.
"""

from jupyter_sched.version import __version__ as __version__  # the package's version, also here


def submit(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Runs ``fn(*args, **kwargs)`` as an app and returns its Job (``job.result()`` is rank 0's value).

    Keywords ``scheduler`` (default ``local_cwd``), ``num_replicas``, ``cfg``, ``resource``, ``image`` and
    ``name`` are ``submit``'s; every other keyword goes to ``fn``. See :func:`jupyter_sched.notebook.fn_job.submit`.
    """
    from jupyter_sched.notebook.fn_job import submit as submit_function

    return submit_function(fn, *args, **kwargs)


def sweep(fn, grid, **kwargs):  # type: ignore[no-untyped-def]
    """Runs ``fn(**params)`` for each point of ``grid`` (a list of kwargs dicts, or a dict of lists meaning
    their product), at most ``max_concurrent`` at a time; returns a Sweep (one live table, ``results()`` in
    grid order). See :func:`jupyter_sched.notebook.sweep.sweep`."""
    from jupyter_sched.notebook.sweep import sweep as run_sweep

    return run_sweep(fn, grid, **kwargs)


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Called by ``%load_ext jupyter_sched``: registers the magics and rich displays."""
    from jupyter_sched.notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    from jupyter_sched.notebook.extension import unload

    unload(ipython)
