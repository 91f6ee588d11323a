"""The Jupyter server extension: the user's jobs, their status, logs and cancel, over HTTP.

Enabled by ``etc/jupyter/jupyter_server_config.d/jupyter_sched.json``, which the wheel installs (from
``jupyter-config/server-config/``): installing the package is all it takes. It serves what the CLI reads,
from any process and without a kernel (see :mod:`.index`), under ``{base_url}jupyter-sched/api/`` (routes:
:mod:`.handlers`), to the JupyterLab extension's Jobs sidebar and job views.

It is a jupyter_server ``ExtensionApp`` (:class:`JobsServer`): the server calls its ``stop_extension`` when
it stops, which ends the log followers, the listing's thread and the thread pool, so nothing of ours
outlives the server (and a server whose clients have left runs no thread of ours but the pool's idle
workers).

Settings (``jupyter_server_config.py`` or the command line)::

    c.JobsServer.schedulers = [...]            # default: the registry's built-in backends; also "torchx:..."
    c.JobsServer.sessions = ["default"]        # besides those found in the log dir
    c.JobsServer.refresh_interval = 1.0        # seconds a listing is reused
    c.JobsServer.max_log_streams = 64          # replicas followed live at once
    c.JobsServer.log_stream_linger = 5.0       # seconds a log nobody watches is still followed

Its modules, each a renderer or a server of what ``jupyter_sched.frontend`` models (none derives a job fact):

* :mod:`.handlers` -- the routes; every one needs the server's login.
* :mod:`.index` -- the jobs across sessions and backends, through the frontend's one ``Lister``, cached.
* :mod:`.ended` -- the jobs each listing saw end, in a ring with cursors, so a client asks "ended since".
* :mod:`.rows` -- the model's rows filtered and paged (the payloads' JSON Schema is
  ``jupyter_sched.frontend.jobs.schema``; the JupyterLab side's types are generated from it).
* :mod:`.logs` -- a replica's log for the browser: snapshots, and a live follow shared by every viewer.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

from jupyter_server.extension.application import ExtensionApp
from traitlets import Float, Int, Unicode
from traitlets import List as ListTrait

from jupyter_sched.schedulers import BUILTIN_SCHEDULERS
from jupyter_sched.schedulers.common.state_dir import LOG_DIR_ENV, default_log_dir

API_PATH = "jupyter-sched/api/"


class JobsServer(ExtensionApp):
    """jupyter_sched's server extension: its settings, its routes, and its stop."""

    name = "jupyter_sched"
    load_other_extensions = True

    schedulers = ListTrait(
        Unicode(), default_value=list(BUILTIN_SCHEDULERS),
        help="Backends asked for jobs (besides those a notebook of the session launched on). A backend that"
        " cannot answer is retried later; it is named in the list's notices if it was set here or a notebook"
        " used it (the defaults are skipped quietly where their engine is missing).",
    ).tag(config=True)  # fmt: skip
    sessions = ListTrait(
        Unicode(), default_value=["default"],
        help="Sessions always listed, besides the session directories of the log dir and the sessions of"
        " notebooks' launch registries.",
    ).tag(config=True)  # fmt: skip
    log_dir = Unicode(
        "", help="The local backend's log dir (empty: $JUPYTER_SCHED_LOG_DIR, else the per-user default)."
        " Setting it exports JUPYTER_SCHED_LOG_DIR in the server, as the notebook's SchedMagics.log_dir does.",
    ).tag(config=True)  # fmt: skip
    refresh_interval = Float(1.0, help="Seconds a listing of the jobs is reused by every client.").tag(config=True)
    backoff = Float(30.0, help="Seconds before a backend that could not be asked is asked again.").tag(config=True)
    max_log_streams = Int(64, help="Replica logs followed live at once (shared by all viewers).").tag(config=True)
    log_stream_linger = Float(
        5.0, help="Seconds a replica's log is still followed after its last viewer left (a view that reconnects"
        " at once finds it); then its reader thread and file are released.",
    ).tag(config=True)  # fmt: skip
    keep_lines = Int(2000, help="Lines kept per followed log (the browser is sent at most these).").tag(config=True)
    max_snapshot_lines = Int(5000, help="The most lines a log snapshot may ask for.").tag(config=True)
    workers = Int(4, help="Threads for blocking calls (status, log reads, cancel).").tag(config=True)

    context: Any = None

    def initialize_settings(self) -> None:
        from jupyter_sched.server.handlers import Context
        from jupyter_sched.server.index import IndexSettings, JobIndex
        from jupyter_sched.server.logs import Followers

        if self.log_dir:
            os.environ[LOG_DIR_ENV] = os.path.abspath(os.path.expanduser(self.log_dir))
        configured = "schedulers" in self.config.get("JobsServer", {})
        root = str(getattr(self.serverapp, "root_dir", "") or "")
        settings = IndexSettings(
            schedulers=list(self.schedulers), sessions=list(self.sessions), log_dir=_log_dir(),
            quiet=frozenset() if configured else frozenset(BUILTIN_SCHEDULERS),
            root_dir=os.path.abspath(os.path.expanduser(root)),
            refresh_interval=self.refresh_interval, backoff=self.backoff,
        )  # fmt: skip
        self.context = Context(
            JobIndex(settings),
            Followers(self.max_log_streams, self.keep_lines, linger=self.log_stream_linger),
            ThreadPoolExecutor(self.workers, thread_name_prefix="jsched-server"), self.max_snapshot_lines,
        )  # fmt: skip
        self.settings["jupyter_sched"] = self.context
        self.log.info("jupyter_sched: jobs API at %s (log dir %s)", self._api_url(), settings.log_dir)

    def initialize_handlers(self) -> None:
        from jupyter_sched.server.handlers import routes

        self.handlers.extend(routes(API_PATH, self.context))

    async def stop_extension(self) -> None:
        """The server is stopping: the followers, the listing's thread and the pool end now."""
        if self.context is not None:
            self.context.close()
            self.context = None

    def _api_url(self) -> str:
        from jupyter_server.utils import url_path_join

        base = self.serverapp.web_app.settings["base_url"] if self.serverapp and self.serverapp.web_app else "/"
        return str(url_path_join(base, API_PATH))


def _jupyter_server_extension_points() -> List[Dict[str, Any]]:
    return [{"module": "jupyter_sched.server", "app": JobsServer}]


def _log_dir() -> str:
    return os.path.abspath(os.path.expanduser(default_log_dir()))
