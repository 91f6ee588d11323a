"""``python -m jupyter_sched ...`` is the ``jupyter-sched`` command line."""

from jupyter_sched.cli.main import main

if __name__ == "__main__":
    main()
