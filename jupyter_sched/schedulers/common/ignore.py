"""``.dockerignore`` as docker reads it, for building a workspace's context without the docker CLI.

Pure (no I/O): lines are parsed from the file's text, whichever filesystem it came from. Docker's rules:
blank lines and ``#`` comments are skipped; ``*``, ``?``, ``[...]`` and ``**`` (any number of directories)
match as in Go's ``filepath.Match`` extended by docker; ``!`` makes an exception; the last matching line
wins; and a pattern that matches a directory also matches everything under it.
"""

from __future__ import annotations

import posixpath
import re
from typing import List, Tuple

_Pattern = Tuple[bool, "re.Pattern[str]", int]


def dockerignore_lines(text: str) -> List[str]:
    """The patterns of a ``.dockerignore`` file's text, without blank lines and comments."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def compile_patterns(lines: List[str]) -> List[_Pattern]:
    """(is_exception, regex, number of path segments) per ``.dockerignore`` line, as docker compiles them."""
    out: List[_Pattern] = []
    for line in lines:
        exception = line.startswith("!")
        text = line[1:].strip() if exception else line
        if not text:
            continue
        text = posixpath.normpath(text)
        if len(text) > 1 and text.startswith("/"):
            text = text.lstrip("/")
        out.append((exception, re.compile(_to_regex(text)), len(text.split("/"))))
    return out


def _to_regex(pattern: str) -> str:
    out = ["^"]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if i + 1 < n and pattern[i + 1] == "*":
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                out.append(".*" if i >= n else "(.*/)?")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(r"\[")
            else:
                body = pattern[i + 1 : end]
                if body.startswith("^"):
                    body = "^" + body[1:].replace("\\", "\\\\")
                out.append("[" + body + "]")
                i = end
        elif ch in ".+()|{}$^":
            out.append("\\" + ch)
        else:
            out.append(ch)
        i += 1
    out.append("$")
    return "".join(out)


def is_ignored(path: str, patterns: List[_Pattern]) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is excluded from the build context."""
    matched = False
    parent = posixpath.dirname(path)
    parent_dirs = parent.split("/") if parent else []
    for exception, regex, ndirs in patterns:
        if exception != matched:  # only an exception can undo a match, only a pattern can make one
            continue
        match = regex.match(path) is not None
        if not match and parent_dirs and ndirs <= len(parent_dirs):
            match = regex.match("/".join(parent_dirs[:ndirs])) is not None
        if match:
            matched = not exception
    return matched
