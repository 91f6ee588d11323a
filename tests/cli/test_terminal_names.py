"""App and role names are user text: one with terminal escapes in it (a window title ``ESC ] 0;...BEL``, a
clipboard write ``ESC ] 52;...``, a screen clear) is shown as visible escapes by every verb, on a real
pseudo-terminal, whichever backend stored it; the terminal (a pyte VT100 screen) gets no title and no
control string. Job output keeps its own rule (``log`` strips control strings on a terminal)."""

from __future__ import annotations

import json
from typing import List

import pyte
import pytest

from tests.cli.cli_helpers import Cli
from tests.schedulers.docker.fixtures import BUSYBOX

TITLE = "\x1b]0;PWNED-TITLE\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
CLEAR = "\x1b[2J\x1b[H"
APP = f"ti{TITLE}tle"
ROLE = f"r{CLIPBOARD}x{CLEAR}\u202e"  # and a bidi override, which reorders what follows on some terminals
SHOWN_ROLE = r"r\x1b]52;c;cm0gLXJmIH4=\x07x\x1b[2J\x1b[H\u202e"
SHOWN_APP = r"ti\x1b]0;PWNED-TITLE\x07tle"
TOP_REDRAW = b"\x1b[H\x1b[2J"  # top on a terminal clears the screen before each table

COMPONENT = f'''from jupyter_sched.specs import AppDef, Role


def evil(image: str = "", code: int = 0) -> AppDef:
    """An app and a role whose names drive a terminal; the replica outlives the first usage sample (0.1 s), so
    that `top` has a row to name it in."""
    script = f"echo hello; sleep 0.3; exit {{code}}"
    return AppDef({APP!r}, [Role({ROLE!r}, image, entrypoint="sh", args=["-c", script])])
'''


def screen_of(output: bytes) -> pyte.Screen:
    # tall enough for all of it: `list -s local_docker` lists every container of the test run, and lines
    # scrolled off a short screen would be lost, whatever they held
    screen = pyte.Screen(200, max(60, output.count(b"\n") + 2))
    pyte.Stream(screen).feed(output.decode("utf-8", "replace"))
    return screen


def assert_harmless(output: bytes, *shown: str) -> List[str]:
    """Nothing in ``output`` acts on the terminal but colours (and ``top``'s own redraw), and each of
    ``shown`` is visible on it."""
    if output.startswith(TOP_REDRAW):
        output = output[len(TOP_REDRAW) :]
    assert b"\x1b]" not in output and b"\x07" not in output and b"\x1b[2J" not in output, output
    screen = screen_of(output)
    assert screen.title == "" and screen.icon_name == ""
    lines = [line.rstrip() for line in screen.display]
    for text in shown:
        assert any(text in line for line in lines), (text, lines)
    return lines


@pytest.fixture
def evil(cli: Cli) -> Cli:
    (cli.cwd / "evil.py").write_text(COMPONENT)
    return cli


def _every_verb(cli: Cli, handle: str) -> None:
    for args, shown in (
        (("list",), [SHOWN_APP]),
        (("status", handle), [f"{SHOWN_ROLE}[0]:SUCCEEDED"]),
        (("log", handle), [f"{SHOWN_ROLE}/0 hello"]),
        (("top", handle), [f"{SHOWN_ROLE}[0]"]),
        (("describe", handle), ["r\\u001b]52;c;cm0gLXJmIH4=\\u0007x"]),  # YAML's escapes
    ):
        rc, output = cli.on_tty(*args)
        assert rc == 0, output
        assert_harmless(output, *shown)
    for args in (("log", "--json", handle), ("status", "--json", handle), ("describe", "--json", handle)):
        rc, output = cli.on_tty(*args)  # JSON escapes what a terminal acts on, and reads back the same name
        assert rc == 0, output
        assert b"\x1b" not in output and b"\x07" not in output and "\u202e".encode() not in output, output
        text = output.decode().replace("\r\n", "\n")
        if args[0] == "log":
            roles = {json.loads(line)["role"] for line in text.splitlines()}
        else:
            roles = {r.get("role", r.get("name")) for r in json.loads(text)["roles"]}
        assert roles == {ROLE}, roles
    rc, output = cli.on_tty("log", f"{handle}/nosuch")  # the error lists the roles there are
    assert rc == 1 and b"has no role 'nosuch'" in output
    assert_harmless(output, SHOWN_ROLE)


def test_names_with_escapes_are_shown_not_obeyed_on_a_terminal(evil: Cli) -> None:
    rc, output = evil.on_tty("run", "evil.py:evil", "--code", "3")  # streams the logs, then the status
    assert rc == 1, output
    assert_harmless(output, f"{SHOWN_ROLE}/0 hello", f"*{SHOWN_ROLE}[0]:FAILED (exitcode: 3)")
    rc, output = evil.on_tty("run", "evil.py:evil")
    assert rc == 0, output
    lines = assert_harmless(output, f"{SHOWN_ROLE}/0 hello")
    handle = next(line for line in lines if line.startswith("local_cwd://"))
    rc, output = evil.on_tty("run", "--dryrun", "evil.py:evil")
    assert rc == 0, output
    assert_harmless(output, "- name: " + '"r\\u001b]52;c;cm0gLXJmIH4=\\u0007x')
    _every_verb(evil, handle)


@pytest.mark.parametrize(
    "scheduler, engine, extra",
    [("local_docker", "docker_engine", ("--image", BUSYBOX)), ("slurm", "slurm_cluster", ())],
)
def test_names_kept_by_other_backends_are_shown_not_obeyed(
    evil: Cli, request: pytest.FixtureRequest, scheduler: str, engine: str, extra: tuple
) -> None:
    """Docker keeps the names in container labels, Slurm in the job's manifest and name: read back from
    there, they are shown as escapes too."""
    request.getfixturevalue(engine)
    rc, output = evil.on_tty("run", "-s", scheduler, "--wait", "evil.py:evil", *extra, "--code", "3")
    assert rc == 1, output
    lines = assert_harmless(output, f"*{SHOWN_ROLE}[0]:FAILED (exitcode: 3)")
    handle = next(line for line in lines if line.startswith(f"{scheduler}://"))
    rc, output = evil.on_tty("list", "-s", scheduler)
    assert rc == 0 and handle.encode() in output
    assert_harmless(output, SHOWN_APP)
    for args, shown in (
        (("status", handle), f"{SHOWN_ROLE}[0]:FAILED"),
        (("log", handle), f"{SHOWN_ROLE}/0 hello"),
    ):
        rc, output = evil.on_tty(*args)
        assert rc == 0, output
        assert_harmless(output, shown)
