"""A real kernel of this interpreter: ``%load_ext jupyter_sched`` and ``%sched_run --wait`` a local job, then
read its log through the returned job (run by scripts/ci/wheel_smoke.sh inside the wheel's venv)."""

from __future__ import annotations

import json
import os
import sys
import tempfile

from jupyter_client.manager import KernelManager

tmp = tempfile.mkdtemp()
spec_dir = os.path.join(tmp, "kernels", "smoke")
os.makedirs(spec_dir)
with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
    json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
               "display_name": "smoke", "language": "python"}, f)  # fmt: skip
os.environ["JUPYTER_PATH"] = tmp
km = KernelManager(kernel_name="smoke", transport="ipc", ip=os.path.join(tmp, "ipc"))
km.start_kernel(env={**os.environ, "IPYTHONDIR": os.path.join(tmp, "ipython")}, cwd=os.getcwd())
kc = km.client()
kc.start_channels()
try:
    kc.wait_for_ready(timeout=60)
    msgs: list = []
    code = (
        "%load_ext jupyter_sched\n"
        "job = %sched_run --wait -s local_cwd utils.echo --msg hello-from-the-kernel\n"
        "print('STATE', job.state)\n"
        "print('LOGS', job.logs())\n"
    )
    reply = kc.execute_interactive(code, output_hook=msgs.append, timeout=120)
    errors = [m["content"] for m in msgs if m["msg_type"] == "error"]
    stdout = "".join(
        m["content"]["text"] for m in msgs if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
    )
    assert reply["content"]["status"] == "ok", errors
    assert "STATE SUCCEEDED" in stdout and "hello-from-the-kernel" in stdout, stdout
    print("kernel: %load_ext jupyter_sched + %sched_run: ok")
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
