"""The Scheduler contract's template methods and the registry (with a real entry-point plugin)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import List, Mapping, Optional

import pytest

from jupyter_sched.runner import Runner
from jupyter_sched.schedulers import get_default_scheduler_name, get_scheduler_factories
from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    filter_regex,
    split_lines,
    split_lines_iterator,
)
from jupyter_sched.specs import AppDef, AppDryRunInfo, AppState, CfgVal, Resource, Role, runopts


class RecordingScheduler(Scheduler[dict]):
    """A minimal in-memory backend that records what the template methods hand it."""

    def __init__(self) -> None:
        super().__init__("recording", "sess")
        self.apps: dict[str, dict] = {}
        self.cancelled: List[str] = []

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("queue", str, "queue", default="default")
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[dict]:
        app.roles[0].env["TOUCHED"] = "1"  # as in TorchX, the base class hands over the caller's AppDef
        return AppDryRunInfo({"app": app.name, "cfg": dict(cfg), "hooks": []}, str)

    def schedule(self, dryrun_info: AppDryRunInfo[dict]) -> str:
        self.apps["id-1"] = dryrun_info.request
        return "id-1"

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        return DescribeAppResponse(app_id=app_id, state=AppState.RUNNING) if app_id in self.apps else None

    def list(self) -> List[ListAppResponse]:
        return [ListAppResponse(a, AppState.RUNNING) for a in self.apps]

    def _cancel_existing(self, app_id: str) -> None:
        self.cancelled.append(app_id)


class HookRole(Role):
    def pre_proc(self, scheduler: str, dryrun_info: AppDryRunInfo) -> AppDryRunInfo:
        dryrun_info.request["hooks"].append((self.name, scheduler))
        return dryrun_info


def _app() -> AppDef:
    res = Resource(cpu=1, gpu=0, memMB=10)
    return AppDef(
        "a", [HookRole("r1", "img", entrypoint="e", resource=res), HookRole("r2", "img", entrypoint="e", resource=res)]
    )


def test_submit_is_dryrun_then_schedule_with_hooks_and_resolved_cfg() -> None:
    sched = RecordingScheduler()
    app = _app()
    assert sched.submit(app, {}) == "id-1"
    request = sched.apps["id-1"]
    assert request["cfg"] == {"queue": "default"}
    assert request["hooks"] == [("r1", "recording"), ("r2", "recording")]
    assert app.roles[0].env["TOUCHED"] == "1"
    info = sched.submit_dryrun(app, {"queue": "q"})
    assert info.app is app and info.cfg == {"queue": "q"}


def test_exists_cancel_and_default_validation() -> None:
    sched = RecordingScheduler()
    assert not sched.exists("id-1")
    sched.cancel("id-1")  # unknown: nothing to do
    assert sched.cancelled == []
    sched.submit(_app(), {})
    sched.cancel("id-1")
    assert sched.exists("id-1") and sched.cancelled == ["id-1"]
    no_resource = AppDef("a", [Role("r", "img", entrypoint="e")])
    with Runner("s", {"recording": lambda session, **kw: RecordingScheduler()}) as runner:
        with pytest.raises(ValueError, match="No resource for role"):  # the runner validates, as TorchX's
            runner.run(no_resource, "recording")
    with pytest.raises(NotImplementedError, match="does not support application log iteration"):
        sched.log_iter("id-1", "r1")
    sched.close()
    sched.close()


def test_split_lines_and_filters() -> None:
    assert split_lines("foo\nbar") == ["foo\n", "bar"]
    assert split_lines("") == []
    assert split_lines("a\r\nb\n") == ["a\r\n", "b\n"]
    assert list(split_lines_iterator(["ab", "c\nd", "e\n", "f"])) == ["abc\n", "de\n", "f"]
    assert list(filter_regex("^x", ["xa\n", "b\n", "xc"])) == ["xa\n", "xc"]
    big = "line\n" * 200_000  # linear time: a quadratic split would not finish this quickly
    assert len(split_lines(big)) == 200_000


def test_list_response_hash_and_equality() -> None:
    a = ListAppResponse("id", AppState.RUNNING, "h")
    b = ListAppResponse("id", AppState.RUNNING, "h")
    assert a == b and len({a, b}) == 1
    assert DescribeAppResponse().app_id == "<NOT_SET>" and DescribeAppResponse().num_restarts == -1


def test_registry_defaults_local_cwd_first() -> None:
    factories = get_scheduler_factories()
    assert next(iter(factories)) == "local_cwd" == get_default_scheduler_name()
    assert "local_dir" in factories
    sched = factories["local_cwd"]("s")
    try:
        assert sched.session_name == "s" and "log_dir" in dict(sched.run_opts())
    finally:
        sched.close()


def test_entry_point_plugins_add_to_builtins(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A real installed distribution (a .dist-info on sys.path) registering a scheduler."""
    (tmp_path / "myplugin.py").write_text(
        "from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler as create\n"
    )
    dist = tmp_path / "myplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[jupyter_sched.schedulers]\nmine = myplugin:create\n")
    code = textwrap.dedent(
        f"""
        import sys; sys.path.insert(0, {str(tmp_path)!r})
        from jupyter_sched.schedulers import get_scheduler_factories, get_default_scheduler_name
        f = get_scheduler_factories()
        print(list(f)[0], 'mine' in f, 'local_dir' in f, get_default_scheduler_name())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["local_cwd", "True", "True", "local_cwd"]


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, jupyter_sched, jupyter_sched.runner;"
        " print([m for m in ('docker', 'ipywidgets') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == "[]"
