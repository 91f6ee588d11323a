"""What the displays never show: secret-looking environment values, wherever they appear.

A value is masked when its variable's name looks like a secret (:data:`SECRET_NAME`), and credentials
inside a URL (``scheme://user:password@host``) are masked whatever the name. The same variables also
appear inside command lines and scripts (``docker run --env NAME=VALUE``, Slurm's ``-e NAME=VALUE``), so
:func:`mask_shell_text` masks those words in place, leaving every other character as it was, so the line
stays a copyable command (quoting and ``"$VARS"`` untouched).
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Dict, Mapping

SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASS|KEY|CREDENTIAL|AUTH|COOKIE|CONN(ECTION)?_?STR|_PWD$|^PWD_", re.IGNORECASE
)
"""Environment variable names whose values are never shown: tokens, secrets, passwords and passphrases
(``PASS``), keys, credentials, auth headers and sockets, cookies, connection strings, ``MYSQL_PWD``-style
names (but not ``PWD``, the working directory). Masking a harmless value is cheap; showing a secret is not."""
URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@", re.IGNORECASE)
"""``scheme://user:password@`` (or ``scheme://token@``) inside a value: the userinfo is masked."""
MASK = "********"

_PIECE = r"""(?:[^\s'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")"""
_WORD = re.compile(rf"#[^\n]*|{_PIECE}+", re.DOTALL)
"""A shell word with its quoting as written, or a comment (a word that starts with ``#``)."""
_ENV_FLAGS = ("-e", "--env")


def mask_value(name: str, value: Any) -> str:
    """``value`` of the variable ``name`` as it may be shown: masked whole when the name looks like a
    secret, else with the credentials of any URL inside it masked."""
    if SECRET_NAME.search(name):
        return MASK
    return URL_CREDENTIALS.sub(rf"\1{MASK}@", str(value))


def mask_env(env: Mapping[str, Any]) -> Dict[str, str]:
    """A copy of ``env`` (sorted by name) with :func:`mask_value` applied to every value."""
    return {k: mask_value(k, v) for k, v in sorted(env.items())}


def _mask_assignment(word: str, prefix: str = "") -> str:
    """A shell word ``NAME=VALUE`` (after ``prefix``, as written) masked, re-quoted only if it changed."""
    try:
        parts = shlex.split(word[len(prefix):])
    except ValueError:
        return prefix + MASK
    if len(parts) != 1 or "=" not in parts[0]:
        return word
    name, _, value = parts[0].partition("=")
    masked = mask_value(name, value)
    return word if masked == value else prefix + shlex.quote(f"{name}={masked}")


def mask_shell_text(text: str) -> str:
    """``text`` (a command line or a script) with the values of ``-e``/``--env``/``--env=`` assignments
    masked as :func:`mask_value` says, and URL credentials anywhere masked. Every other character is kept."""
    out, pos, previous = [], 0, ""
    for m in _WORD.finditer(text):
        word = m.group()
        if word.startswith("#"):
            continue
        if previous in _ENV_FLAGS:
            replacement = _mask_assignment(word)
        elif word.startswith("--env="):
            replacement = _mask_assignment(word, "--env=")
        else:
            replacement = word
        if replacement != word:
            out.append(text[pos:m.start()] + replacement)
            pos = m.end()
        if word != "\\\n":
            previous = word
    out.append(text[pos:])
    return URL_CREDENTIALS.sub(rf"\1{MASK}@", "".join(out))
