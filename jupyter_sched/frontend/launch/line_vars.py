"""Variables in a magic's line, expanded the way a shell expands its own: ``$name``, never ``{...}``.

IPython expands every magic line before the magic sees it: ``$name`` and ``$name.attr`` outside single
quotes, and ``{expression}`` anywhere, quotes included. The braces are what hurts a job's line: Python
code (``-c "print(f'epoch {i}')"``), regular expressions (``--regex 'x{3}'``) and TorchX's macros
(``${replica_id}``) all use them, and a notebook that happens to have an ``i`` silently runs other code.
So the jupyter_sched magics opt out of IPython's expansion and apply this rule instead, the one a shell
applies to its variables (the line is split like a shell command anyway):

* ``$name`` and ``$name.attr.attr`` are replaced by the value (``str``) of a variable of the notebook
  (a cell's locals first), outside single quotes; inside double quotes too, as a shell does. The value is
  taken literally (never re-read for quotes); outside quotes it is split into words, as a shell splits an
  unquoted variable;
* a ``$name`` the notebook does not define stays as written (``utils.sh "echo $HOME"`` reaches the shell);
* ``$$name`` is a literal ``$name`` (IPython's escape); ``\\$name`` and ``'...$name...'`` stay as written;
* ``{...}`` and ``${...}`` are never touched.

:func:`expand` returns the line and the variables it replaced, so a front end can say what changed.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, List, Mapping, Tuple

_NAME = re.compile(r"\$(\$?)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_MISSING = object()


def _resolve(path: str, namespace: Mapping[str, Any]) -> Any:
    head, *attrs = path.split(".")
    value = namespace.get(head, _MISSING)
    for attr in attrs:
        if value is _MISSING:
            break
        value = getattr(value, attr, _MISSING)
    return value


def _quoted(value: str, quote: str) -> str:
    """``value`` as it must be written where it lands so that splitting the line gives it back literally, as
    a shell's expansion is never re-read for quotes: inside double quotes with ``"`` and ``\\`` escaped;
    outside quotes split into words (as a shell splits an unquoted expansion), each quoted."""
    if quote == '"':
        return value.replace("\\", "\\\\").replace('"', '\\"')
    return " ".join(shlex.quote(word) for word in value.split())


def expand(line: str, namespace: Mapping[str, Any]) -> Tuple[str, List[str]]:
    """``line`` with its ``$variables`` replaced (see the module docstring), and the ``$name`` spellings
    that were replaced, in order."""
    out: List[str] = []
    used: List[str] = []
    quote = ""  # the quote we are inside: "'", '"' or ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote != "'" and char == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])  # an escaped character (\$, \", \') stays as written
            i += 2
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        elif char == "$" and quote != "'":
            match = _NAME.match(line, i)
            if match:
                escaped, path = match.groups()
                value = _MISSING if escaped else _resolve(path, namespace)
                if escaped:
                    out.append("$" + path)
                elif value is _MISSING:
                    out.append(match.group(0))
                else:
                    out.append(_quoted(str(value), quote))
                    used.append("$" + path)
                i = match.end()
                continue
        out.append(char)
        i += 1
    return "".join(out), used
