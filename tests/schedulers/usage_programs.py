"""Real programs for the usage tests: one that holds memory and spins a core until told to stop."""

from __future__ import annotations

MB = 1024 * 1024


def hog_code(mb: int, stop_file: str = "", ready_file: str = "") -> str:
    """Python that allocates and touches ``mb`` MB, writes ``ready_file``, then spins one core until
    ``stop_file`` exists (forever without one: a limit or a cancel ends it)."""
    return (
        "import os\n"
        f"b = bytearray({mb} * 1024 * 1024)\n"
        "for i in range(0, len(b), 4096):\n"
        "    b[i] = 1\n"
        + (f"open({ready_file!r}, 'w').close()\n" if ready_file else "")
        + "n = 0\n"
        f"while not {bool(stop_file)} or n % 100000 or not os.path.exists({stop_file!r}):\n"
        "    n += 1\n"
    )

