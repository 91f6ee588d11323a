"""Programs the built-in components run (``python -m jupyter_sched.components.apps.NAME``)."""
