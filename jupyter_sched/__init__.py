"""jupyter_sched: launch apps (roles x replicas) on a scheduler and watch them live from a notebook.

``%load_ext jupyter_sched`` registers the notebook magics. Importing this package stays light: it pulls in
neither docker nor ipywidgets; those load when a docker job or a widget is first used.
"""

__version__ = "0.1.0"


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """Called by ``%load_ext jupyter_sched``: registers the magics and rich displays."""
    from jupyter_sched.notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    from jupyter_sched.notebook.extension import unload

    unload(ipython)
