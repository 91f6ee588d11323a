"""A name is untrusted text: accepted as TorchX accepts it, and escaped wherever it is shown as HTML."""

from __future__ import annotations

from jupyter_sched.notebook.displays.dryrun_repr import dryrun_html, dryrun_text
from jupyter_sched.notebook.displays.reprs import app_status_html, appdef_html, describe_html
from jupyter_sched.runner import Runner
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppState, AppStatus, ReplicaStatus, Role, RoleStatus

EVIL = '<img src=x onerror="alert(1)">'


def test_a_hostile_name_is_escaped_in_every_html_view(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = AppDef(EVIL, [Role(EVIL, "", entrypoint="sh", args=["-c", "true"])])
    with Runner("s", {"local_cwd": create_cwd_scheduler}) as runner:
        info = runner.dryrun(app, "local_cwd", cfg={"log_dir": str(tmp_path)})
        html = dryrun_html(info)
        assert "<img" not in html and "&lt;img" in html
        assert EVIL in dryrun_text(info)  # plain text keeps the name as written
        assert "<img" not in appdef_html(app) and "&lt;img" in appdef_html(app)
        handle = runner.run(app, "local_cwd", cfg={"log_dir": str(tmp_path)})
        status = runner.wait(handle, wait_interval=0.1, timeout=60)
        assert status is not None and status.state == AppState.SUCCEEDED
        assert "<img" not in app_status_html(status) and "&lt;img" in app_status_html(status)
        described = runner._scheduler("local_cwd").describe(handle.rsplit("/", 1)[1])
        assert described is not None and "<img" not in describe_html(described)
    replica = ReplicaStatus(0, AppState.FAILED, EVIL, "host", structured_error_msg=f'{{"message": "{EVIL}"}}')
    status = AppStatus(AppState.FAILED, msg=EVIL, roles=[RoleStatus(EVIL, [replica])])
    assert "<img" not in app_status_html(status)
