"""Fixtures of the notebook tests: an in-process IPython shell with the extension, and a recording comm.

The shell is IPython's own test shell (``start_ipython()``, a TerminalInteractiveShell) with a temporary
IPYTHONDIR. Widgets need no front end: ``comm.create_comm`` is replaced by one that records every message
a widget sends (reference §5.2), which is how traffic is asserted without timing anything.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, Iterator, List

import pytest


@pytest.fixture(scope="session")
def ip(tmp_path_factory: pytest.TempPathFactory) -> Any:
    os.environ["IPYTHONDIR"] = str(tmp_path_factory.mktemp("ipython"))
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    shell.run_line_magic("load_ext", "jupyter_sched")
    return shell


@pytest.fixture
def magics(ip: Any) -> Iterator[Any]:
    """The loaded SchedMagics, in text mode; every trait a test changes is restored afterwards."""
    from jupyter_sched.notebook.extension import load

    m = load(ip)
    saved = {name: getattr(m, name) for name in m.trait_names() if m.trait_metadata(name, "config")}
    m.interactive = False
    yield m
    for name, value in saved.items():
        setattr(m, name, value)


@pytest.fixture
def widgets(magics: Any) -> Any:
    """The magics in widget mode."""
    magics.interactive = True
    return magics


class Recorder:
    """Every message sent by every comm created while installed: (comm_id, msg_type, data, bytes)."""

    def __init__(self) -> None:
        self.messages: List[Dict[str, Any]] = []
        self.lock = threading.Lock()

    def updates(self, comm_id: str) -> List[Dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if m["comm_id"] == comm_id and m["msg_type"] == "comm_msg"]

    def state_values(self, comm_id: str, key: str) -> List[Any]:
        return [m["data"]["state"][key] for m in self.updates(comm_id) if key in m["data"].get("state", {})]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    import comm
    from comm.base_comm import BaseComm

    rec = Recorder()

    class RecordingComm(BaseComm):
        def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                        **keys: Any) -> None:  # fmt: skip
            size = len(json.dumps(data, default=str))
            with rec.lock:
                rec.messages.append({"comm_id": self.comm_id, "msg_type": msg_type, "data": data, "bytes": size})

    monkeypatch.setattr(comm, "create_comm", lambda *a, **kw: RecordingComm(*a, **kw))
    return rec
