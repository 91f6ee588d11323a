"""Programs the built-in components run (``python -m jupyter_sched.components.apps.NAME``).

* :mod:`.booth` -- ``utils.booth``'s program: Booth's function at (x1, x2), its result recorded.
"""
