"""The notebook's session: its Runner, the jobs it knows, and how an app is found again by id or name.

Its runner is the process-wide one of its session and log dir (:mod:`jupyter_sched.runner.shared`), never
closed by the notebook layer: closing a Runner closes its local scheduler, which stops the apps it owns,
and unloading the extension must not kill jobs. A small registry file (one JSON line per launch, under
``<log_dir>/.notebook/<session>.jsonl``) remembers which scheduler each app was launched on, so after a
kernel restart ``%sched_list`` also asks e.g. ``local_docker`` for its apps.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from jupyter_sched.frontend.job import Job
from jupyter_sched.frontend.jobs.listing import Lister, Listing
from jupyter_sched.functions.job import Launcher
from jupyter_sched.notebook.displays.job_display import track
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.runner.shared import shared_runner
from jupyter_sched.schedulers.common.private_files import FILE_MODE, make_private_dirs
from jupyter_sched.schedulers.common.state_dir import NOTEBOOK_REGISTRY, default_log_dir
from jupyter_sched.specs import AppState, parse_app_handle


def state_dir() -> str:
    return os.path.join(default_log_dir(), NOTEBOOK_REGISTRY)


@dataclass
class AppRow:
    """One app as ``%sched_list`` shows it."""

    handle: str
    name: str
    state: AppState

    @property
    def app_id(self) -> str:
        return parse_app_handle(self.handle).app_id


class Session:
    """What the magics share: settings, the runner, jobs of this kernel, and lookup of older apps."""

    def __init__(self, config: Any) -> None:
        self._config = config
        self.jobs: "OrderedDict[str, Job]" = OrderedDict()
        """Every job this kernel has touched (launched or re-attached), by handle."""
        self.launches: List[str] = []
        """Handles launched by this kernel, oldest first."""
        self._lister: Optional[Lister] = None

    # -- settings ---------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return str(self._config.session_name)

    @property
    def runner(self) -> Any:
        return shared_runner(self.name, self._config.log_dir)

    def settings(self) -> PaneSettings:
        return self._config.pane_settings()

    def interactive(self) -> bool:
        return bool(self._config.interactive)

    def default_scheduler(self) -> str:
        """The trait if set, else what ``jupyter-sched run`` picks (project config, else the registry's)."""
        if self._config.default_scheduler:
            return str(self._config.default_scheduler)
        from jupyter_sched.frontend.launch.config import load_config
        from jupyter_sched.frontend.targets import pick_scheduler

        try:
            return pick_scheduler(None, load_config())
        except ValueError:
            from jupyter_sched.schedulers import get_default_scheduler_name

            return get_default_scheduler_name()

    # -- jobs ------------------------------------------------------------------------------------------
    def job(self, handle: str, name: Optional[str] = None) -> Job:
        """The Job of ``handle`` (the same object every time in this kernel)."""
        job = self.jobs.get(handle)
        if job is None:
            job = Job(handle, self.runner, name)
            self.adopt(job)
        return job

    def adopt(self, job: Job) -> None:
        """Knows ``job`` from now on (``%sched_job`` finds it) and shows it with this session's settings; a
        job a kernel of the session launched learns that kernel's pid from the registry (its panes then say
        that the kernel's exit ended a local app)."""
        track(job, self.settings, self.interactive)
        self.jobs[job.handle] = job
        if job.kernel_pid is None:
            entry = next((e for e in reversed(self.registry()) if e["handle"] == job.handle), None)
            pid = entry.get("kernel_pid") if entry is not None else None
            job.kernel_pid = pid if isinstance(pid, int) else None

    def launched_job(self, job: Job) -> None:
        """A job launched outside the magics (``jupyter_sched.submit``, a sweep's run): recorded like theirs."""
        self.adopt(job)
        self.launched(job.handle, job.name)

    @property
    def launcher(self) -> Launcher:
        """``jupyter_sched.submit``/``sweep`` in this kernel: on this session's runner, each job recorded here."""
        return Launcher(self.runner, on_launch=self.launched_job, adopt=self.adopt)

    def launched(self, handle: str, name: str) -> Job:
        """Records a launch in this kernel and in the registry file (with this kernel's pid: the owner
        of a local app, whose exit a restarted kernel can then name)."""
        job = self.job(handle, name)
        job.kernel_pid = os.getpid()
        self.launches.append(handle)
        entry: Dict[str, Any] = {"handle": handle, "name": name, "submitted": time.time(), "kernel_pid": os.getpid()}
        notebook = os.environ.get("JPY_SESSION_NAME")  # the notebook Jupyter started this kernel for
        if notebook:
            entry["notebook"] = notebook
        self._append_registry(entry)
        return job

    def _registry_path(self) -> str:
        _ = self.runner  # the property exports the configured log dir first
        return os.path.join(state_dir(), f"{self.name}.jsonl")

    def _append_registry(self, entry: Dict[str, Any]) -> None:
        path = self._registry_path()
        try:
            make_private_dirs(os.path.dirname(path))
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE), "a") as f:
                f.write(json.dumps(entry) + "\n")
        except OSError as e:  # the job runs anyway; only finding it by name after a restart suffers
            warnings.warn(f"jupyter_sched: could not record the job in {path}: {e}", stacklevel=3)

    def registry(self) -> List[Dict[str, Any]]:
        """Launches recorded by this and earlier kernels of the session, oldest first."""
        try:
            with open(self._registry_path()) as f:
                lines = f.readlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                entry = json.loads(line)
                parse_app_handle(entry["handle"])
                out.append(entry)
            except (ValueError, KeyError, TypeError):
                continue
        return out

    # -- listing and lookup ---------------------------------------------------------------------------
    def schedulers(self, extra: Iterable[str] = ()) -> List[str]:
        """Schedulers to ask for apps: the default one, configured ones, and any used in this session."""
        names = [self.default_scheduler(), *self._config.list_schedulers, *extra]
        names += [parse_app_handle(h).scheduler_backend for h in self.jobs]
        names += [parse_app_handle(e["handle"]).scheduler_backend for e in self.registry()]
        return list(dict.fromkeys(n for n in names if n))

    @property
    def lister(self) -> Lister:
        """The front ends' one listing (:mod:`jupyter_sched.frontend.jobs.listing`), kept by the session so an
        ended app's status is read once whichever list asks."""
        if self._lister is None:
            self._lister = Lister(lambda _session: self.runner)
        return self._lister

    def list_jobs(self, schedulers: Optional[Iterable[str]] = None, statuses: bool = True) -> Listing:
        """The rows of this session's apps on each scheduler (the launch record's name, notebook and
        scheduler win), and notices for schedulers that could not be asked. ``statuses=False``: only what
        the schedulers' listings say (for a lookup by name)."""
        launches: List[Mapping[str, Any]] = list(self.registry())
        recorded = {entry["handle"]: entry for entry in launches}
        # the jobs this kernel knows name themselves, keeping what the registry recorded of their launch (the
        # kernel that launched it, whose exit a failure's reason names; the notebook; when)
        launches += [{**recorded.get(h, {}), "handle": h, "name": job.name} for h, job in self.jobs.items()]
        asked = self.schedulers() if schedulers is None else list(schedulers)
        return self.lister.list([self.name], asked, {self.name: launches}, statuses=statuses)

    def list_apps(self, schedulers: Optional[Iterable[str]] = None) -> Tuple[List[AppRow], List[str]]:
        """:meth:`list_jobs` without statuses, as (handle, name, state) by app id, and its notices."""
        listing = self.list_jobs(schedulers, statuses=False)
        rows = [AppRow(r.handle, r.name, AppState[r.state]) for r in listing.rows]
        return sorted(rows, key=lambda r: r.app_id), listing.notices

    def resolve(self, text: str, namespace: Optional[Mapping[str, Any]] = None) -> str:
        """A handle from: nothing (the last launch of this kernel, else of the session), a variable holding a Job, a
        handle, an app id, a unique app-id prefix, or an app name (its latest launch). Raises LookupError
        with the candidates otherwise."""
        text = text.strip()
        if not text:
            if self.launches:
                return self.launches[-1]
            entries = self.registry()
            if entries:
                return entries[-1]["handle"]
            raise LookupError("no job was launched in this session yet; give an app handle or id")
        value = (namespace or {}).get(text) if text.isidentifier() else None
        if isinstance(value, Job):
            return value.handle
        if "://" in text:
            parse_app_handle(text)
            return text
        recorded = [(e["handle"], e.get("name", "")) for e in self.registry()]
        recorded += [(h, self.jobs[h].name) for h in self.launches]  # in case the registry is unwritable
        handle = _match(text, recorded) or _match(text, [(r.handle, r.name) for r in self.list_apps()[0]])
        if handle is None:
            raise LookupError(f"no app {text!r} in session {self.name!r}; see %sched_list")
        return handle


def _match(text: str, candidates: List[Tuple[str, str]]) -> Optional[str]:
    """An app id, else the latest app of that name, else a unique app-id prefix (candidates oldest first)."""
    ids: Dict[str, str] = {}
    for handle, _ in candidates:
        ids[parse_app_handle(handle).app_id] = handle
    if text in ids:
        return ids[text]
    named = [handle for handle, name in candidates if name == text]
    if named:
        return named[-1]
    prefixed = [i for i in ids if i.startswith(text)]
    if len(prefixed) > 1:
        raise LookupError(f"{text!r} matches several apps: {', '.join(sorted(prefixed)[:8])}")
    return ids[prefixed[0]] if prefixed else None
