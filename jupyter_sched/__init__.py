"""jupyter_sched: launch apps (roles x replicas) on a scheduler and watch them live from a notebook.

``%load_ext jupyter_sched`` registers the notebook magics. Importing this package stays light: it pulls in
neither docker nor ipywidgets; those load when a docker job or a widget is first used. ``submit``,
``sweep`` (with ``MedianStopping`` and ``SuccessiveHalving``, its early stopping rules), ``load_sweep`` and
``attach`` work in any Python process, IPython or not (see
:class:`jupyter_sched.functions.job.Launcher`); they look for a running IPython shell without importing
IPython, so a plain script loads neither IPython nor traitlets, and only a shell loads the notebook layer.

Its layers, from the data model up (README's "Architecture" draws them):

* ``specs`` -- the data model (AppDef, Role, states), pure; ``logs`` -- bytes to lines and escaped HTML, pure.
* ``schedulers`` -- TorchX's Scheduler contract and one wing per backend; ``workspace`` and ``util`` keep
  TorchX's module paths.
* ``runner`` -- sessions, handles, wait, status and logs; ``components`` -- ready-made AppDefs.
* ``track`` -- metrics logged from inside a job (``jupyter_sched.track.log``).
* ``frontend`` -- what every front end shares: the one model of a job and a jobs list, the log follower.
* ``functions`` -- a notebook's functions, sweeps and maps as jobs, and notebooks run as jobs (``Notebook``).
* ``cli`` (``__main__``: ``python -m jupyter_sched``), ``notebook`` and ``server`` -- the front ends.
* ``version`` -- ``__version__``, a leaf.
"""

import sys
from typing import Any, Optional

from jupyter_sched.version import __version__ as __version__  # the package's version, also here


def _running_shell() -> Optional[Any]:
    """The running IPython shell, else None, asked without importing IPython: a shell exists only once
    IPython is imported, and importing it in a plain script (with traitlets, about 80 modules) would cost
    ``submit`` 75-110 ms for nothing. ``sys.modules["IPython"]`` may be None where it was blocked."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    return get_ipython() if callable(get_ipython) else None


def _notebook_launcher() -> Optional[Any]:
    """The notebook's launcher when a shell is running (loading the extension if needed), else None; only
    then is the notebook layer imported."""
    if _running_shell() is None:
        return None
    from jupyter_sched.notebook.extension import shell_launcher

    return shell_launcher()


def _launcher() -> Any:
    """The notebook's launcher in a running IPython (the jobs are then the session's, as ``%sched_run``'s
    are), else one on the default session's shared runner."""
    launcher = _notebook_launcher()
    if launcher is not None:
        return launcher
    from jupyter_sched.functions.job import Launcher
    from jupyter_sched.runner import DEFAULT_SESSION
    from jupyter_sched.runner.shared import shared_runner

    return Launcher(shared_runner(DEFAULT_SESSION))


def submit(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Runs ``fn(*args, **kwargs)`` as an app and returns its Job (``job.result()`` is rank 0's value).

    Keywords ``scheduler`` (default ``local_cwd``), ``num_replicas``, ``cfg``, ``resource``, ``image`` and
    ``name`` are ``submit``'s; every other keyword goes to ``fn``. See
    :meth:`jupyter_sched.functions.job.Launcher.submit`. In IPython, ``job = submit(...)`` shows the job's
    panes, as ``job = %sched_run ...`` does."""
    notebook = _notebook_launcher()
    job = (notebook or _launcher()).submit(fn, *args, **kwargs)
    if notebook is not None:
        from jupyter_sched.notebook.displays.launch_display import show_if_assigned

        show_if_assigned(job, sys._getframe(1))
    return job


def sweep(fn, grid, **kwargs):  # type: ignore[no-untyped-def]
    """Runs ``fn(**params)`` for each point of ``grid`` (a list of kwargs dicts, or a dict of lists meaning
    their product), at most ``max_concurrent`` at a time; returns a Sweep (one live table in a notebook,
    ``results()`` in grid order). See :func:`jupyter_sched.functions.sweeps.sweep.sweep`."""
    from jupyter_sched.functions.sweeps.sweep import sweep as run_sweep

    return run_sweep(_launcher(), fn, grid, **kwargs)


def load_sweep(name, scheduler="local_cwd", cfg=None):  # type: ignore[no-untyped-def]
    """A sweep of this session launched earlier (e.g. before a kernel restart), with the results of its
    finished runs; ``retry_failed()`` launches its failed runs again. See
    :func:`jupyter_sched.functions.sweeps.sweep.load_sweep`."""
    from jupyter_sched.functions.sweeps.sweep import load_sweep as load

    return load(_launcher(), name, scheduler, cfg)


def attach(handle, cfg=None):  # type: ignore[no-untyped-def]
    """The Job of a function app launched earlier (another kernel, before a restart), whose ``result()``
    reads what its replicas wrote. See :meth:`jupyter_sched.functions.job.Launcher.attach`."""
    return _launcher().attach(handle, cfg)


def map(fn, items, chunksize=None, max_concurrent=None, errors="raise", **kwargs):  # type: ignore[no-untyped-def]  # noqa: A001
    """Runs ``fn(item)`` for each item, ``chunksize`` items per app (default: about four chunks per
    concurrent slot; a small map gets one app per item), ``max_concurrent`` apps at a time (default 4);
    ``.results()`` is one value per item, in order (``errors="raise"|"return"|"skip"``: what a failed item
    gives). Other keywords are :func:`sweep`'s. See :func:`jupyter_sched.functions.sweeps.maps.map_sweep`."""
    from jupyter_sched.functions.sweeps.maps import map_sweep

    return map_sweep(_launcher(), fn, items, chunksize, max_concurrent, errors, **kwargs)


def as_completed(jobs_or_sweep, timeout=None):  # type: ignore[no-untyped-def]
    """Yields the jobs (a list of Jobs, or a sweep's runs) as they end. See
    :func:`jupyter_sched.functions.sweeps.futures.as_completed`."""
    from jupyter_sched.functions.sweeps.futures import as_completed as completed

    return completed(jobs_or_sweep, timeout)


#: Names this package gives from deeper modules, imported on first use (PEP 562), so ``import jupyter_sched``
#: stays light: name -> the module that defines it.
LAZY = {
    "MedianStopping": "jupyter_sched.functions.sweeps.stopping",
    "SuccessiveHalving": "jupyter_sched.functions.sweeps.stopping",
    "Notebook": "jupyter_sched.functions.notebooks.notebook",
    "inspect_notebook": "jupyter_sched.functions.notebooks.notebook",
    "record": "jupyter_sched.functions.notebooks.record",
}


def __getattr__(name):  # type: ignore[no-untyped-def]
    """``jupyter_sched.MedianStopping`` and ``jupyter_sched.SuccessiveHalving``, the early stopping rules of
    ``sweep(..., stop=...)`` (see :mod:`jupyter_sched.functions.sweeps.stopping`); ``Notebook``,
    ``inspect_notebook`` and ``record``, a notebook run as a job (:mod:`jupyter_sched.functions.notebooks`):
    each imported when first asked."""
    module = LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'jupyter_sched' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Called by ``%load_ext jupyter_sched``: registers the magics and rich displays."""
    from jupyter_sched.notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    from jupyter_sched.notebook.extension import unload

    unload(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the built JupyterLab extension is inside this package: ``jupyter labextension develop
    --overwrite .`` (scripts/setup/labextension.sh) links it into the environment from here, so a checkout's
    rebuild shows at the next page load. An installed wheel has it in share/jupyter/labextensions instead."""
    return [{"src": "labextension", "dest": "jupyter-sched"}]
