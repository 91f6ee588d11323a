"""The Jupyter server extension: the user's jobs, their status, logs and cancel, over HTTP.

Enabled by ``etc/jupyter/jupyter_server_config.d/jupyter_sched.json``, which the wheel installs (from
``jupyter-config/server-config/``): installing the package is all it takes. It serves what the CLI reads,
from any process and without a kernel (see :mod:`.index`), under ``{base_url}jupyter-sched/api/`` (routes:
:mod:`.handlers`), to the JupyterLab extension's Jobs sidebar and job views.

Settings (``jupyter_server_config.py`` or the command line)::

    c.JobsServer.schedulers = ["local_cwd", "local_dir", "local_docker", "slurm"]   # also: "torchx:..."
    c.JobsServer.sessions = ["default"]        # besides those found in the log dir
    c.JobsServer.refresh_interval = 1.0        # seconds a listing is reused
    c.JobsServer.max_log_streams = 64          # replicas followed live at once
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

from traitlets import Float, Int, Unicode
from traitlets import List as ListTrait
from traitlets.config import Configurable

from jupyter_sched.schedulers.common.state_dir import LOG_DIR_ENV, default_log_dir

API_PATH = "jupyter-sched/api/"
DEFAULT_SCHEDULERS = ["local_cwd", "local_dir", "local_docker", "slurm"]


class JobsServer(Configurable):
    """Configuration of jupyter_sched's server extension."""

    schedulers = ListTrait(
        Unicode(), default_value=list(DEFAULT_SCHEDULERS),
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
    keep_lines = Int(2000, help="Lines kept per followed log (the browser is sent at most these).").tag(config=True)
    max_snapshot_lines = Int(5000, help="The most lines a log snapshot may ask for.").tag(config=True)
    workers = Int(4, help="Threads for blocking calls (listings, status, log reads, cancel).").tag(config=True)


def _jupyter_server_extension_points() -> List[Dict[str, str]]:
    return [{"module": "jupyter_sched.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from jupyter_server.utils import url_path_join

    from jupyter_sched.server.handlers import Context, routes
    from jupyter_sched.server.index import IndexSettings, JobIndex
    from jupyter_sched.server.logs import Followers

    config = JobsServer(parent=serverapp)
    if config.log_dir:
        os.environ[LOG_DIR_ENV] = os.path.abspath(os.path.expanduser(config.log_dir))
    configured = "schedulers" in serverapp.config.get("JobsServer", {})
    settings = IndexSettings(
        schedulers=list(config.schedulers), sessions=list(config.sessions), log_dir=_log_dir(),
        quiet=frozenset() if configured else frozenset(DEFAULT_SCHEDULERS),
        root_dir=os.path.abspath(os.path.expanduser(str(getattr(serverapp, "root_dir", "") or ""))),
        refresh_interval=config.refresh_interval, backoff=config.backoff,
    )  # fmt: skip
    context = Context(
        JobIndex(settings), Followers(config.max_log_streams, config.keep_lines),
        ThreadPoolExecutor(config.workers, thread_name_prefix="jsched-server"), config.max_snapshot_lines,
    )  # fmt: skip
    base = url_path_join(serverapp.web_app.settings["base_url"], API_PATH)
    serverapp.web_app.add_handlers(".*$", routes(base, context))
    serverapp.web_app.settings["jupyter_sched"] = context
    serverapp.log.info("jupyter_sched: jobs API at %s (log dir %s)", base, settings.log_dir)


def _log_dir() -> str:
    return os.path.abspath(os.path.expanduser(default_log_dir()))


# the name jupyter_server looks up in older releases
load_jupyter_server_extension = _load_jupyter_server_extension
