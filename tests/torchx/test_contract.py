"""The Scheduler contract as TorchX defines it: what a scheduler written for TorchX may rely on.

A subclass that never overrides ``_validate`` or validates in ``_submit_dryrun`` gets TorchX's base
behaviour (``submit_dryrun`` neither copies nor validates; ``Runner.dryrun`` validates), while our own
backends still refuse bad input before a request is built, however they are called.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, List, Mapping, Optional

import pytest

from jupyter_sched.runner import Runner
from jupyter_sched.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler, WorkspaceMixin
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppDryRunInfo, CfgVal, InvalidAppError, Resource, Role
from jupyter_sched.specs.request.limits import MAX_REPLICAS_ENV


class Minimal(WorkspaceMixin[None], Scheduler[List[str]]):
    """Written as for TorchX: no ``_validate`` override, no validation of its own."""

    def __init__(self, session_name: str, **kwargs: Any) -> None:
        super().__init__("minimal", session_name)
        self.built: List[AppDef] = []

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        role.image = f"{role.image}+{workspace}"

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[List[str]]:
        self.built.append(app)
        return AppDryRunInfo([r.name for r in app.roles], str)

    def schedule(self, dryrun_info: AppDryRunInfo[List[str]]) -> str:
        return "app-1"

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        return None

    def list(self) -> List[ListAppResponse]:
        return []

    def _cancel_existing(self, app_id: str) -> None:
        pass


def _app(**role: Any) -> AppDef:
    return AppDef("a", [Role("r", "img", entrypoint="echo", **role)])


def test_workspace_mixin_is_generic() -> None:
    sched = Minimal("s")
    assert isinstance(sched, WorkspaceMixin) and sched.backend == "minimal"
    app = _app(resource=Resource(1, 0, 64))
    sched.submit(app, {}, workspace="ws")
    assert sched.built[0].roles[0].image == "img+ws"
    assert app.roles[0].image == "img"  # our submit works on a copy
    with pytest.raises(NotImplementedError):
        sched.push_images(None)


def test_base_submit_dryrun_neither_copies_nor_validates() -> None:
    sched = Minimal("s")
    app = _app()  # no resource: TorchX's default _validate would refuse it, but only the runner calls it
    info = sched.submit_dryrun(app, {})
    assert sched.built == [app] and sched.built[0] is app
    assert info.request == ["r"] and info.app is app


def test_runner_dryrun_validates_like_torchx() -> None:
    with Runner("s", {"minimal": Minimal}) as runner:
        with pytest.raises(ValueError, match="No resource for role"):
            runner.dryrun(_app(), "minimal")
        with pytest.raises(ValueError, match="roles"):
            runner.dryrun(AppDef("no roles"), "minimal")
        with pytest.raises(ValueError, match="num_replicas"):
            runner.dryrun(_app(num_replicas=0, resource=Resource(1, 0, 64)), "minimal")
        assert runner.dryrun(_app(resource=Resource(1, 0, 64)), "minimal").request == ["r"]
        assert runner._scheduler("minimal").built[0].roles[0].env  # the runner's copy got the job id


@pytest.mark.parametrize("call", ["submit_dryrun", "submit"])
def test_our_backends_refuse_bad_input_however_called(call: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sched = create_cwd_scheduler("s")
    try:
        app = _app(num_replicas=0)
        with pytest.raises(InvalidAppError, match=r"roles\[0\]\.num_replicas"):
            getattr(sched, call)(app, {"log_dir": str(tmp_path)})
        assert list(tmp_path.iterdir()) == []
    finally:
        sched.close()


def test_num_replicas_is_bounded_before_any_request_is_built(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    huge = _app(num_replicas=99999999999999999999)
    with Runner("s", {"local_cwd": create_cwd_scheduler}) as runner:
        with pytest.raises(InvalidAppError) as e:
            runner.dryrun(huge, "local_cwd")
        assert e.value.field == "roles[0].num_replicas" and MAX_REPLICAS_ENV in e.value.fix
        sched = runner._scheduler("local_cwd")
        with pytest.raises(InvalidAppError, match=r"roles\[0\]\.num_replicas"):
            sched.submit_dryrun(huge, {})
        two = AppDef("a", [Role(n, "img", entrypoint="echo", num_replicas=40) for n in ("x", "y")])
        monkeypatch.setenv(MAX_REPLICAS_ENV, "64")
        with pytest.raises(InvalidAppError) as e:
            runner.dryrun(two, "local_cwd")
        assert e.value.field == "roles" and "80" in str(e.value)
        monkeypatch.setenv(MAX_REPLICAS_ENV, "80")
        assert len(runner.dryrun(two, "local_cwd").request.role_params["y"]) == 40
        monkeypatch.setenv(MAX_REPLICAS_ENV, "lots")
        with pytest.raises(InvalidAppError, match=MAX_REPLICAS_ENV):
            runner.dryrun(two, "local_cwd")


def test_cli_refuses_a_huge_num_replicas_in_a_dry_run() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter_sched.cli.main", "run", "--dryrun", "utils.sh",
         "--num_replicas", "99999999999999999999", "echo hi"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "roles[0].num_replicas" in proc.stderr and MAX_REPLICAS_ENV in proc.stderr


def test_runner_calls_the_scheduler_as_torchx_does() -> None:
    """``log_iter`` gets ``streams`` by keyword, and a scheduler object that is not ours (a mock, a
    foreign class) is dry-run without our replica limit rather than failing on it."""
    from unittest.mock import MagicMock

    mock = MagicMock()
    mock.describe.return_value = DescribeAppResponse(app_id="a")
    mock.log_iter.return_value = iter(["x\n"])
    with Runner("s", {"mock": lambda session, **kw: mock}) as runner:
        assert list(runner.log_lines("mock://s/a", "r", 1)) == ["x\n"]
        mock.log_iter.assert_called_once_with("a", "r", 1, None, None, None, False, streams=None)
        runner.dryrun(_app(resource=Resource(1, 0, 64)), "mock")
        mock.submit_dryrun.assert_called_once()
