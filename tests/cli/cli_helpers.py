"""Runs the real ``jupyter-sched`` command (the console script, or ``python -m jupyter_sched``) as a
subprocess (imported by the tests of this directory; the fixtures are in conftest.py)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

SCRIPT = str(Path(sys.executable).parent / "jupyter-sched")
TIMEOUT = 60


@dataclass
class Cli:
    cwd: Path
    env: Dict[str, str]

    def argv(self, args: tuple, module: bool = False) -> List[str]:
        return [sys.executable, "-m", "jupyter_sched", *args] if module else [SCRIPT, *args]

    def __call__(self, *args: str, module: bool = False) -> subprocess.CompletedProcess:
        """Runs the command; stdout and stderr are decoded without newline translation, so ``\\r`` stays."""
        proc = subprocess.run(
            self.argv(args, module), cwd=self.cwd, env=self.env, capture_output=True, timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        return subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
        )

    def popen(self, *args: str, **kwargs: object) -> subprocess.Popen:
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(
            self.argv(args),
            cwd=self.cwd,
            env=self.env,
            text=True,
            stdin=subprocess.DEVNULL,
            **kwargs,  # type: ignore[arg-type]
        )

    def on_terminal(self, *args: str) -> bytes:
        """Runs the command with stdout on a pseudo-terminal (as a user's shell would); it must exit 0.
        Returns what the terminal received."""
        primary, secondary = pty.openpty()
        proc = subprocess.Popen(self.argv(args), cwd=self.cwd, env=self.env, stdout=secondary,
                                stderr=subprocess.PIPE)  # fmt: skip
        os.close(secondary)
        received = _drain(primary)
        assert proc.wait(timeout=TIMEOUT) == 0, proc.stderr.read() if proc.stderr else ""
        return received

    def on_tty(self, *args: str) -> "tuple[int, bytes]":
        """Runs the command with stdout and stderr on one pseudo-terminal (what a user sees); returns the
        exit code and every byte the terminal received."""
        primary, secondary = pty.openpty()
        env = {**self.env, "TERM": "xterm", "COLUMNS": "200"}
        proc = subprocess.Popen(self.argv(args), cwd=self.cwd, env=env, stdout=secondary, stderr=secondary,
                                stdin=subprocess.DEVNULL)  # fmt: skip
        os.close(secondary)
        received = _drain(primary)
        return proc.wait(timeout=TIMEOUT), received

    def run_app(self, *args: str) -> str:
        """``jupyter-sched run ARGS`` that must succeed; returns the app handle (stdout's first line)."""
        proc = self("run", *args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()[0]


def make_cli(base: Path) -> Cli:
    """A Cli working in ``base/work`` with its own state directory ``base/state``, so the apps of one test
    are invisible to the others."""
    work = base / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "JUPYTER_SCHED_IMAGE")}
    env["JUPYTER_SCHED_LOG_DIR"] = str(base / "state")
    return Cli(work, env)


def _drain(primary: int) -> bytes:
    """Everything a pseudo-terminal's primary side receives until the other side is closed; closes it."""
    chunks = []
    while True:
        try:
            data = os.read(primary, 4096)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    return b"".join(chunks)
