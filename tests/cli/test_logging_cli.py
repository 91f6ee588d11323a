"""Library progress goes through the ``jupyter_sched`` logger; the CLI shows it on stderr, ``-q`` hides it
(a real workspace build on the Docker engine)."""

from __future__ import annotations

from tests.cli.cli_helpers import Cli
from tests.schedulers.docker.fixtures import BUSYBOX


def test_workspace_build_progress_on_stderr_unless_quiet(cli: Cli, docker_engine: None) -> None:
    (cli.cwd / "data.txt").write_text("from-the-workspace\n")
    args = ("run", "-s", "local_docker", "--wait", "--workspace", ".",
            "utils.sh", "--image", BUSYBOX, "cat", "data.txt")  # fmt: skip
    loud = cli(*args)
    assert loud.returncode == 0, loud.stderr
    assert "jupyter-sched: built jupyter-sched/workspace:" in loud.stderr and "Step 1/" in loud.stderr
    quiet = cli("-q", *args)
    assert quiet.returncode == 0, quiet.stderr
    assert "jupyter-sched: " not in quiet.stderr.replace("jupyter-sched: note", "")
    assert "built" not in quiet.stderr and "Step" not in quiet.stderr
