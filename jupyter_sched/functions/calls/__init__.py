"""One function call as something that can be sent to a replica, and brought back.

* :mod:`.pack` -- pickling ``fn, args, kwargs`` with cloudpickle, naming what cannot be pickled.
* :mod:`.sources` -- where the function's code was written, so a replica's traceback shows the user's source.
* :mod:`.fn_args` -- a call from a magic line: ``train --lr 0.1 data.csv`` to ``train("data.csv", lr=0.1)``.
* :mod:`.images` -- whether a container image can run what this interpreter pickles.
* :mod:`.rerun` -- calling a job's call again in this process (``err.rerun_here()``).
"""
