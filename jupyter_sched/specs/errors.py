"""Typed exceptions of the data model (``AppStatusError`` is beside the status it carries, in ``state``).

Every message names the bad value and says how to fix it, because these errors are read by a person in a
notebook cell, usually right after they typed the value.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from jupyter_sched.specs.output.masking import mask_text, mask_tree


class InvalidAppError(ValueError):
    """An AppDef or Role that cannot run as written (raised before anything starts).

    ``field`` is the dotted path of the offending value, e.g. ``roles[1].num_replicas``.
    """

    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"{field}: {problem}. {fix}")


class InvalidRunConfigException(ValueError):
    """A run option (``cfg``) that is missing, unknown or of the wrong type.

    The message quotes what was given (``Given: env={...}``, the ``k=v`` text that did not parse), and run
    options carry secrets (``env=API_TOKEN:...``), so it is masked by the one rule
    (:mod:`jupyter_sched.specs.output.masking`) here, once, for every caller and every front end."""

    def __init__(self, invalid_reason: str, cfg_key: str, cfg: Optional[Mapping[str, Any]] = None) -> None:
        if cfg is None:  # parsing a cfg string: the reason already quotes the bad text
            text = invalid_reason
        else:
            shown = mask_tree({str(k): v for k, v in cfg.items()})
            given = ", ".join(f"{k}={v!r}" for k, v in shown.items()) if cfg else "<EMPTY>"
            text = f"{invalid_reason}. Given: {given}"
        super().__init__(mask_text(text))
        self.cfg_key = cfg_key


class MalformedAppHandleException(ValueError):
    """An app handle that is not ``{scheduler}://{session}/{app_id}``."""

    def __init__(self, app_handle: str) -> None:
        super().__init__(
            f"{app_handle!r} is not of the form: <scheduler_backend>://<session_name>/<app_id>"
            " (e.g. local_cwd://default/echo-b3k2x9q0d1)"
        )


class UnknownAppException(Exception):
    """The scheduler has no record of the app: never submitted, evicted, or its logs were removed."""

    def __init__(self, app_handle: str) -> None:
        super().__init__(
            f"Unknown app = {app_handle}. Check the handle for typos, or list the known apps with"
            " `jupyter-sched list` / `%sched_list`."
        )


class BackendUnavailableError(RuntimeError):
    """A backend's service cannot be reached right now (no Docker engine answers, Slurm's commands are missing
    or do not answer, a cluster's API is down): asking again later may work. The message says what could not
    be reached and how to bring it up. Front ends show it as a temporary failure (the Jupyter server's jobs
    API: 503), not as a fault of the request or of the app."""


class UnknownSchedulerException(Exception):
    """A scheduler name that is not registered."""

    def __init__(self, scheduler: str, known: Optional[list[str]] = None) -> None:
        hint = f" Use one of: {', '.join(known)}" if known else ""
        super().__init__(f"Unknown scheduler backend: {scheduler!r}.{hint}")
        self.scheduler = scheduler
