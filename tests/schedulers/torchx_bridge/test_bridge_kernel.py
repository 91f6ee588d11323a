"""``%sched_run -s torchx:local_cwd`` in a real kernel: TorchX's own local scheduler behind our magics,
status and logs."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterator

import pytest

from tests.conftest import require_module  # noqa: E402

require_module("torchx", "the torchx extra: pip install jupyter_sched[torchx]")
jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

KERNEL = "jupyter_sched_torchx_test"


@pytest.fixture
def kc(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from jupyter_client.manager import KernelManager

    spec_dir = tmp_path / "jupyter" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec_dir / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "t", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython"), "JUPYTER_SCHED_LOG_DIR": str(tmp_path / "state")}
    km = KernelManager(kernel_name=KERNEL, transport="ipc", ip=str(tmp_path / "ipc"))
    km.start_kernel(env=env, cwd=str(tmp_path))
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    try:
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def run_ok(kc: Any, code: str) -> str:
    """Runs ``code``; its stdout and the plain text of what it displayed."""
    msgs: list = []
    reply = kc.execute_interactive(code, output_hook=msgs.append, timeout=120)
    errors = [m["content"] for m in msgs if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "ok", errors
    out = [m["content"]["text"] for m in msgs if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"]
    shown = [
        m["content"]["data"].get("text/plain", "") for m in msgs if m["msg_type"] in ("display_data", "execute_result")
    ]
    return "".join(out) + "\n".join(shown)


def test_sched_run_on_torchx_local_cwd(kc: Any) -> None:
    run_ok(kc, "%load_ext jupyter_sched")
    run_ok(kc, "job = %sched_run -s torchx:local_cwd utils.sh --num_replicas 2 echo hello-x-bridge")
    out = run_ok(kc, (
        "status = job.wait(timeout=120)\n"
        "print(job.handle)\n"
        "print(status.state, [r.id for r in status.roles[0].replicas])\n"
        "print('\\n'.join(job.logs()))\n"
    ))  # fmt: skip
    handle, state, *logs = out.splitlines()
    assert handle.startswith("torchx:local_cwd://")
    assert state == "SUCCEEDED [0, 1]"
    assert sum("hello-x-bridge" in line for line in logs) == 2
    listing = run_ok(kc, "%sched_list -s torchx:local_cwd")
    assert handle.rsplit("/", 1)[1] in listing and "SUCCEEDED" in listing, listing
