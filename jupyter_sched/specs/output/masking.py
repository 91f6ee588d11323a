"""The one rule for what no output shows: secrets in env values, command lines and URLs.

Every front end renders through these functions: the CLI's text and ``--json``, the notebook's reprs and
dry-run tables, ``describe``/``status``, and the ``repr`` of :class:`~jupyter_sched.specs.Role` and
:class:`~jupyter_sched.specs.AppDef`. It lives in ``specs`` because it is pure (strings in, strings out)
and so every layer may import it. The rule:

- an environment variable whose name looks like a secret (:data:`SECRET_NAME`) has its value masked;
- an option whose name looks like one has its value masked: ``--password=hunter2``, ``--token x``,
  ``--db-pwd x``;
- a word ``NAME=VALUE`` (``env HF_TOKEN=x cmd``, ``docker run -e HF_TOKEN=x``, ``export ...``) follows
  the env rule;
- credentials inside a URL (``scheme://user:password@host``, ``scheme://token@host``) are masked
  wherever they appear;
- in free text (an error message, a log record: :func:`mask_text`), a pair whose name looks like a secret
  has its value masked, in the forms messages quote values in: ``API_TOKEN=x`` and ``API_TOKEN:x``
  (run options, ``env=API_TOKEN:x``), ``'API_TOKEN': 'x'`` (a Python dict) and ``"API_TOKEN": "x"``
  (JSON), also inside a quoted word (``--cfg 'env=API_TOKEN=x'``); a list or object under such a name
  (``{'API_KEYS': ['a']}``) is hidden whole;
- JSON stays JSON: a string that holds a JSON object or array (a replica's ``structured_error_msg``, read
  from its error file), or one quoted in a message, is parsed and masked as a structure, the value under a
  secret-looking key becoming ``"********"`` whatever its type, and written back in its own layout. Masked
  as shell text it would no longer parse (``"K=x"`` re-quoted as ``'K=********'``).

:func:`mask_out` is the entry point for anything that leaves the process (a string, free text or JSON, or a
structure); :func:`masked_copy` masks an object, such as an ``AppStatus``, that renders itself. The others are
for what is known to be a command line (:func:`mask_argv`, :func:`mask_shell_text`) or an env.

Masking only ever changes what is shown. What runs, and what is kept for re-running, is untouched. The
cost of a false positive (``--max-tokens 5`` shows ``********``) is a value hidden from view; the cost of a
false negative is a leaked token, so the names are matched broadly. Hand-written rather than a library:
no maintained library masks shell words while keeping the line copyable, and the rule is short.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from typing import Any, Dict, List, Mapping, Optional, Sequence, TypeVar

SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASS|KEY|CREDENTIAL|AUTH|COOKIE|CONN(ECTION)?_?STR|_PWD$|^PWD_|(^|_)PAT(_|$)",
    re.IGNORECASE,
)
"""Names whose values are never shown: tokens, secrets, passwords and passphrases (``PASS``), keys,
credentials, auth headers and sockets, cookies, connection strings, ``MYSQL_PWD``-style names (but not
``PWD``, the working directory) and personal access tokens (``GITHUB_PAT``, but not ``PATH``). Option
names are matched with ``-`` read as ``_`` (``--db-pwd``)."""
URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@", re.IGNORECASE)
"""``scheme://user:password@`` (or ``scheme://token@``) inside a value: the userinfo is masked."""
MASK = "********"

_OPTION = re.compile(r"^(-{1,2}[A-Za-z][A-Za-z0-9_.-]*)(=.*)?$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_OPERATORS = {"&&", "||", "|", ";", "&", ">", "<", ">>", "2>", "2>&1", "\\\n"}
_PIECE = r"""(?:[^\s'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")"""
_WORD = re.compile(rf"#[^\n]*|{_PIECE}+", re.DOTALL)
"""A shell word with its quoting as written, or a comment (a word that starts with ``#``)."""
_ENV_FLAGS = ("-e", "--env")
_QUOTED = r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"'
"""A quoted string on one line, backslash escapes included."""
_PAIR = re.compile(
    rf"""(?<![\w.\-])(?P<name>(?P<q>['"])-{{0,2}}[A-Za-z_][\w.-]*(?P=q)\s*:\s*(?=['"0-9\ue000])|-{{0,2}}[A-Za-z_][\w.-]*[=:])"""
    rf"""(?P<value>{_QUOTED}|(?:\\[^\n]|[^\s,;'"(){{}}\[\]\\])+)"""
)
"""A name and its value in free text: ``'NAME': 'value'`` / ``"NAME": "value"`` (a dict's repr, JSON; a
string or a number), or ``NAME=value`` / ``NAME:value`` / ``--name=value`` with nothing between (run options
and their ``KEY:VALUE`` items, env words, options); the value is a quoted string or runs to the next space,
separator, quote or bracket (a backslash-escaped one, ``a\\ b``, is part of it). Prose such as
``KeyError: 'y'`` (an unquoted name, then a space) is not a pair. A value that is a list or an object is
:data:`_SECRET_BRACKET`'s."""
_OPTION_WORD = re.compile(
    rf"""(?<!\S)(?P<name>-{{1,2}}[A-Za-z][\w.-]*)(?P<sep>[ \t]+)(?P<value>{_QUOTED}|[^\s'"-](?:\\[^\n]|\S)*)"""
)
"""``--token VALUE`` in free text: an option and the word after it."""
_PLACEHOLDER = re.compile(r"(?i:value\d*|val\d*|\.\.\.|<[^<>\s]*>)")
"""What usage text writes where a value goes (``--env KEY=VALUE``, ``key=value[,...]``, ``<token>``): not a
secret, and masking it would garble the usage."""


def is_secret_name(name: str) -> bool:
    """True when a variable or option called ``name`` (leading dashes ignored) holds a secret."""
    return bool(SECRET_NAME.search(name.lstrip("-").replace("-", "_")))


def mask_urls(text: str) -> str:
    """``text`` with the credentials of every URL in it masked."""
    return URL_CREDENTIALS.sub(rf"\1{MASK}@", text)


def mask_value(name: str, value: Any) -> str:
    """``value`` of the variable ``name`` as it may be shown: masked whole when the name looks like a
    secret, else with the credentials of any URL inside it masked."""
    if is_secret_name(name):
        return MASK
    return mask_urls(str(value))


def mask_env(env: Mapping[str, Any]) -> Dict[str, str]:
    """A copy of ``env`` (sorted by name) with :func:`mask_value` applied to every value."""
    return {k: mask_value(k, v) for k, v in sorted(env.items())}


def _already_masked(value: str) -> bool:
    """``value`` is the mask (a backend's, or the free-text rule's, which ends a value at a ``,`` or ``;``
    that a shell word goes on past): anything more may be the rest of a secret the free-text rule cut at a
    quote (``K=********"rest``), so it is masked again."""
    return value in (MASK, MASK + ",", MASK + ";")


def _takes_value(word: str) -> bool:
    """True for ``--token`` (a secret option without ``=``): the next word is its value."""
    m = _OPTION.match(word)
    return bool(m and m.group(2) is None and is_secret_name(m.group(1)))


def _hides_next(word: str) -> bool:
    return not (word.startswith("--") or word in _OPERATORS)


def _mask_option(arg: str) -> str:
    m = _OPTION.match(arg)
    if m and m.group(2) is not None and is_secret_name(m.group(1)) and not _already_masked(m.group(2)[1:]):
        return f"{m.group(1)}={MASK}"
    return arg


def mask_arg(arg: str) -> str:
    """One argv element as it may be shown (without context: :func:`mask_argv` also masks the value
    following ``--token``). A script (``sh -c "..."``) is masked as shell text."""
    masked = _mask_option(arg)
    if masked != arg:
        return masked
    if _ASSIGNMENT.match(arg):
        name, _, value = arg.partition("=")
        return f"{name}={mask_value(name, value)}"
    return mask_shell_text(arg)


def mask_argv(argv: Sequence[str]) -> List[str]:
    """A copy of ``argv`` with secrets masked: ``--password=x``, the word after ``--token``,
    ``NAME=VALUE`` words, URL credentials, and the same inside scripts (``sh -c '...'``)."""
    out: List[str] = []
    hide = False
    for arg in argv:
        arg = str(arg)
        if hide and _hides_next(arg):
            out.append(MASK)
            hide = False
            continue
        hide = _takes_value(arg)
        out.append(mask_arg(arg))
    return out


def _mask_assignment(word: str, prefix: str = "", strict: bool = False) -> str:
    """A shell word ``NAME=VALUE`` (after ``prefix``, as written) masked, re-quoted only if it changed.
    ``strict``: the word must be an assignment (after ``-e``), so one that cannot be parsed is masked."""
    try:
        parts = shlex.split(word[len(prefix) :])
    except ValueError:
        return prefix + MASK if strict else word
    if len(parts) != 1 or not _ASSIGNMENT.match(parts[0]):
        return word
    name, _, value = parts[0].partition("=")
    if _already_masked(value):  # by a backend, or by the free-text rule first: left as written
        return word
    masked = mask_value(name, value)
    return word if masked == value else prefix + shlex.quote(f"{name}={masked}")


_QUOTING = re.compile(r"[\s'\"\\]")


def _unquote(word: str) -> Optional[str]:
    """The one shell word ``word`` stands for, without its quoting (None if it is not one)."""
    if word and not _QUOTING.search(word):
        return word  # nothing to unquote: what shlex.split would say, without its cost (a long traceback)
    try:
        parts = shlex.split(word)
    except ValueError:
        return None
    return parts[0] if len(parts) == 1 else None


def _mask_word(word: str, previous: str) -> str:
    if _takes_value(_unquote(previous) or previous) and _hides_next(word):
        return MASK
    if previous in _ENV_FLAGS:
        return _mask_assignment(word, strict=True)
    if word.startswith("--env="):
        return _mask_assignment(word, "--env=", strict=True)
    if _ASSIGNMENT.match(word.lstrip("'\"")):
        return _mask_assignment(word)
    plain = _unquote(word)
    if plain is None:
        return word
    # an option, or a quoted script (sh -c '...') masked inside
    masked = mask_arg(plain) if plain != word else _mask_option(plain)
    if masked == plain:
        return word
    m = _OPTION.match(masked)
    return masked if m and masked.endswith(f"={MASK}") else shlex.quote(masked)


_MAYBE_SECRET = re.compile(r"TOKEN|SECRET|PASS|KEY|CREDENTIAL|AUTH|COOKIE|CONN|PWD|PAT|@|-e|--env", re.IGNORECASE)
"""What a text must hold for the shell rule to mask anything in it: a part of a secret-looking name (looser
than :data:`SECRET_NAME`, whose anchors are a name's ends), a URL's userinfo or an env flag. Most text (a long
traceback) has none, and is returned without reading it word by word."""


def mask_shell_text(text: str) -> str:
    """``text`` (a command line or a script) with secrets masked as :func:`mask_argv` says, word by
    word. Every other character is kept, so the line stays a copyable command (quoting and ``"$VARS"``
    untouched)."""
    if not _MAYBE_SECRET.search(text):
        return text
    out, pos, previous = [], 0, ""
    for m in _WORD.finditer(text):
        word = m.group()
        if word.startswith("#"):
            continue
        replacement = _mask_word(word, previous)
        if replacement != word:
            out.append(text[pos : m.start()] + replacement)
            pos = m.end()
        if word != "\\\n":
            previous = word
    out.append(text[pos:])
    return mask_urls("".join(out))


def _placeholder(name: str, value: str) -> bool:
    """``value`` is usage text's stand-in (``VALUE``, ``<token>``, or the option's own name in capitals as
    argparse writes ``--password PASSWORD``), not a value."""
    bare = value.strip("'\"")
    return bool(_PLACEHOLDER.fullmatch(bare)) or bare == name.lstrip("-").upper().replace("-", "_")


def _masked_value(value: str) -> str:
    """``value`` masked, its quotes kept (an empty string hides nothing and stays)."""
    quote = value[0] if len(value) > 1 and value[0] in "'\"" and value[-1] == value[0] else ""
    return value if quote and len(value) == 2 else f"{quote}{MASK}{quote}"


def _mask_pair(m: "re.Match[str]") -> str:
    head, value = m.group("name"), m.group("value")
    name = head.strip("'\":= \t")
    if not is_secret_name(name):
        return head + _mask_pairs(value)  # env=API_TOKEN=x: the value may hold pairs of its own
    if _placeholder(name, value):
        return m.group()
    quote = m.group("q")
    if quote and value[:1] not in "'\"":  # "NAME": 12 in JSON or a dict: a quoted mask keeps it one
        return f"{head}{quote}{MASK}{quote}"
    return head + _masked_value(value)


def _mask_option_word(m: "re.Match[str]") -> str:
    name, value = m.group("name"), m.group("value")
    if not is_secret_name(name) or _placeholder(name, value):
        return m.group()
    return name + m.group("sep") + _masked_value(value)


def _mask_pairs(text: str) -> str:
    return _PAIR.sub(_mask_pair, text) if ("=" in text or ":" in text) else text


def mask_text(text: str) -> str:
    """Free text (an error message, a log record, a traceback) as it may be shown: the value of every pair
    whose name looks like a secret, in the forms messages quote them (``API_TOKEN=x``, ``API_TOKEN:x``,
    ``'API_TOKEN': 'x'``, ``"API_TOKEN": "x"``, ``--password=x``, ``--token x``; a dict's or JSON's value that
    is a list or an object, ``'API_TOKEN': ['x']``, hidden whole), URL credentials, and a JSON object or
    array quoted in the text (``main[0]: {"message": ...}``) masked as JSON (:func:`mask_json_text`), so it
    stays JSON. Usage text's placeholders (``KEY=VALUE``) and everything else are kept as they were."""
    text = str(text)
    if "{" in text or "[" in text:
        return _mask_embedded_json(text)
    return _mask_plain_text(text)


def _mask_plain_text(text: str) -> str:
    if "{" in text or "[" in text or "(" in text:
        text = _mask_bracketed(text)
    return mask_urls(_OPTION_WORD.sub(_mask_option_word, _mask_pairs(text)) if "-" in text else _mask_pairs(text))


_JSON_START = re.compile(r"[{\[](?=\s*[\"{\[\]}])")
"""Where a JSON object or array quoted in text may start: ``{"``, ``[{``, ``[]``..."""
_JSON_TRIES = 64
"""JSON starts tried in one text (each try may read to the end of the text: the bound keeps it linear)."""


_HOLE = re.compile("\ue000([0-9]+)\ue001")
"""Where a JSON document quoted in text stands while the text around it is masked (private-use characters:
no name, quote or separator, so a value that runs into it takes it whole)."""


def _mask_embedded_json(text: str) -> str:
    """``text`` with each JSON object or array in it masked as JSON, and the text around them as free text.

    Each document is first replaced by a hole (:data:`_HOLE`) and the whole text masked as free text with
    the holes in it, then the masked documents are put back in the holes that are left: a pair whose value
    runs into a hole (``'API_KEY': [...]``, ``HF_TOKEN=[...]``) hides it whole, and a quoted value that
    merely holds JSON-looking text (``'HF_TOKEN': 'a[]b'``) is masked whole, never cut at the document."""
    if "\ue000" in text or "\ue001" in text:
        return _mask_plain_text(text)
    decoder = json.JSONDecoder()
    pieces: List[str] = []
    documents: List[str] = []
    pos, tries = 0, 0
    for m in _JSON_START.finditer(text):
        if m.start() < pos or tries >= _JSON_TRIES:
            continue
        tries += 1
        try:
            _, end = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            continue
        document = text[m.start() : end]
        if end - m.start() == 2:
            continue  # [] or {}: nothing inside to mask, and a pair's empty value hides nothing
        masked = mask_json_text(document)
        pieces += [text[pos : m.start()], f"\ue000{len(documents)}\ue001"]
        documents.append(masked if masked is not None else document)
        pos = end
    if not documents:
        return _mask_plain_text(text)
    shown = _mask_plain_text("".join(pieces) + text[pos:])
    return _HOLE.sub(lambda m: documents[int(m.group(1))], shown)


_SECRET_BRACKET = re.compile(
    r"""(?<![\w.\-])(?:(?P<q>['"])(?P<name>[A-Za-z_][\w.-]*)(?P=q)\s*:\s*|-{0,2}(?P<bare>[A-Za-z_][\w.-]*)[=:])"""
    r"""(?=[\[{(])"""
)
"""``'NAME': [`` / ``"NAME": {`` / ``NAME=[``: a value that is a list, a tuple or an object (a dict's repr,
JSON, a keyword argument's repr)."""
_CLOSE = {"[": "]", "{": "}", "(": ")"}


def _mask_bracketed(text: str) -> str:
    """Values that are a list, tuple or object under a secret-looking name (``{'API_KEYS': ['a', 'b']}``)
    hidden whole, up to the bracket that closes them (or the end of the text when none does)."""
    out, pos = [], 0
    for m in _SECRET_BRACKET.finditer(text):
        if m.start() < pos or not is_secret_name(m.group("name") or m.group("bare")):
            continue
        end = _closing(text, m.end())
        if end == m.end() + 2 and text[m.end() + 1] == _CLOSE[text[m.end()]]:
            continue  # an empty list or object hides nothing
        q = m.group("q") or ""
        out += [text[pos : m.end()], f"{q}{MASK}{q}"]
        pos = end
    return "".join(out) + text[pos:] if out else text


def _closing(text: str, start: int) -> int:
    """The index after the bracket that closes the one at ``start``, skipping quoted strings."""
    stack, i, quote = [], start, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in _CLOSE:
            stack.append(_CLOSE[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return len(text)


def mask_lines(text: str) -> str:
    """Free text laid out one item per line (a scheduler's request repr): a line whose first ``NAME=``
    names a secret is masked to its end (values there are not quoted), the others as shell text."""
    lines = []
    for line in text.splitlines(keepends=True):
        head, eq, _ = line.partition("=")
        name = re.split(r"[\s:]", head.strip())[-1] if head.strip() else ""
        end = "\n" if line.endswith("\n") else ""
        if eq and _NAME.fullmatch(name) and is_secret_name(name):
            lines.append(f"{head}={MASK}{end}")
        else:
            lines.append(mask_shell_text(line))
    return "".join(lines)


def mask_tree(value: Any, key: str = "") -> Any:
    """A JSON-able copy of ``value`` (dicts, lists, dataclasses, scalars) with secrets masked: the value
    under a secret-looking key (a string, a number, or a whole object or list: ``"credentials": {...}``),
    argv lists (``args``, ``argv``, ``command``, ``cmd``), ``NAME=VALUE`` env lists (an item of an env list
    that is not ``NAME=VALUE`` cannot be told from a value: masked), and every other string by
    :func:`_mask_string`: JSON inside it masked as JSON (it stays JSON), anything else as free text and
    as shell text."""
    if isinstance(value, Mapping):
        return {
            str(k): MASK if is_secret_name(str(k)) and _hides_something(v) else mask_tree(v, str(k))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        if key in ("args", "argv", "command", "cmd") and all(isinstance(e, str) for e in value):
            return mask_argv(value)
        if key in ("environment", "env") and all(isinstance(e, str) for e in value):
            return [mask_arg(e) if "=" in e else MASK for e in value]
        return [mask_tree(v, key) for v in value]
    if isinstance(value, str):
        return _mask_string(value)
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return mask_tree({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, key)
    return _mask_string(str(value))


def _hides_something(value: Any) -> bool:
    """A value under a secret-looking key that masking would hide something of: not None, ``""``, ``{}``
    or ``[]`` (showing those says only that there is no secret)."""
    return value is not None and not (isinstance(value, (str, Mapping, list, tuple)) and len(value) == 0)


def _mask_string(text: str) -> str:
    """A string inside a structure: JSON masked as JSON (:func:`mask_json_text`), else as free text
    (:func:`mask_text`: ``'K': 'V'``, ``K:V``...) and then as shell text (:func:`mask_shell_text`: what a
    command line hides, such as ``--token -x`` or ``'K=a"b'``, where free text stops at the quote), because a
    string in a structure may be either (an error message, an entrypoint, a script). Free text first: a
    value it masked is exactly ``********``, which the shell rule leaves as written rather than re-quoting
    it, so a message is not given shell quotes."""
    masked = mask_json_text(text)
    return masked if masked is not None else mask_shell_text(mask_text(text))


_JSON_DEPTH = 64
"""JSON nested deeper than this is not walked: it is masked whole (no error text nests that deep)."""


def mask_json_text(text: str) -> Optional[str]:
    """``text`` masked as JSON when it is a JSON object or array (blank space around it allowed), else None.

    The document is parsed, masked as a tree (:func:`mask_tree`: values under secret-looking keys become
    ``"********"`` whatever their type, strings inside are masked as text, or as JSON when they hold JSON)
    and written back in the original's layout: the same indent, or on one line with the same separators,
    ASCII-escaped only if the original was all ASCII. So it still parses, with the same structure. A document
    with nothing to mask is returned exactly as written."""
    body = text.strip()
    if not body or body[0] + body[-1] not in ("{}", "[]"):
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None  # looks like JSON but is not: free text
    if _depth(data) > _JSON_DEPTH:
        return json.dumps(MASK)
    masked = mask_tree(data)
    if masked == data:
        return text
    start = text.index(body[0])
    return text[:start] + _dumps_like(body, masked) + text[start + len(body) :]


def _depth(value: Any) -> int:
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [
            v for item in level if isinstance(item, (dict, list))
            for v in (item.values() if isinstance(item, dict) else item)
        ]  # fmt: skip
        if depth > _JSON_DEPTH:
            break
    return depth


def _dumps_like(original: str, value: Any) -> str:
    """``value`` as JSON laid out as ``original`` was: its indent (spaces or a tab) if it spans lines, else
    one line with its separators (``{"a": 1, "b": 2}`` or ``{"a":1,"b":2}``)."""
    ascii_only = original.isascii()
    key_sep = ": " if re.search(r'"\s*:\s', original) else ":"
    if "\n" in original:
        indented = re.search(r"\n([ \t]+)\S", original)
        indent: Any = indented.group(1) if indented else 0
        if isinstance(indent, str) and set(indent) == {" "}:
            indent = len(indent)
        return json.dumps(value, indent=indent, separators=(",", key_sep), ensure_ascii=ascii_only)
    item_sep = ", " if re.search(r'[\]}"0-9el],\s', original) else ","
    return json.dumps(value, separators=(item_sep, key_sep), ensure_ascii=ascii_only)


def mask_out(value: Any) -> Any:
    """Anything that leaves the process (printed, logged, sent to a browser, saved in a notebook), as it may
    be shown: a string that is a JSON object or array stays JSON, masked as a tree (:func:`mask_json_text`);
    any other string is free text (:func:`mask_text`); dicts, lists, tuples and dataclasses become a JSON-able
    copy masked as a tree (:func:`mask_tree`: argv and env lists as command lines, JSON in a string as JSON,
    other strings as text); numbers, booleans and None are returned as they are. Masking a masked value
    again is safe: it never shows what the first pass hid, and on a JSON document or ordinary text it changes
    nothing (a contrived text can lose one more value, ``x=Key'API_KEY': 1``, where the first pass's mask
    changed what stands before a name)."""
    if isinstance(value, str):
        masked = mask_json_text(value)
        return masked if masked is not None else mask_text(value)
    return mask_tree(value)


T = TypeVar("T")


def masked_copy(obj: T) -> T:
    """A copy of the dataclass ``obj``, of its own type, with every string field masked by :func:`mask_out`
    (one under a secret-looking name hidden whole) and nested dataclasses and lists of them copied the same
    way; for objects rendered by their own methods, such as ``AppStatus.format()``, which would otherwise be
    masked only after they have quoted and wrapped a message. ``obj`` itself is left as it is."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: _masked_field(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
        return dataclasses.replace(obj, **changes)
    return obj


def _masked_field(name: str, value: Any) -> Any:
    if isinstance(value, str):
        return MASK if is_secret_name(name) and value else mask_out(value)
    if isinstance(value, list):
        return [_masked_field("", v) for v in value]
    if isinstance(value, Mapping):
        return mask_tree(value)
    return masked_copy(value)


def masked_fields(obj: Any, names: Optional[Sequence[str]] = None) -> str:
    """``Type(field=value, ...)`` like a dataclass repr, with ``env`` and ``args`` masked: the ``repr``
    of Role and AppDef."""
    parts = []
    for f in dataclasses.fields(obj):
        if names is not None and f.name not in names or not f.repr:
            continue
        v = getattr(obj, f.name)
        if f.name == "env" and isinstance(v, Mapping):
            v = {k: mask_value(k, x) for k, x in v.items()}
        elif f.name == "args" and isinstance(v, list):
            v = mask_argv(v)
        elif f.name == "metadata" and isinstance(v, Mapping):
            v = mask_tree(v)
        parts.append(f"{f.name}={v!r}")
    return f"{type(obj).__qualname__}({', '.join(parts)})"


def secret_values(env: Mapping[str, Any], args: Sequence[str]) -> List[str]:
    """The values the rule hides in a role's ``env`` and ``args``: each secret-looking variable's value, and
    each word :func:`mask_argv` hides (``--password=x``, the word after ``--token``, ``HF_TOKEN=x``), also
    inside a script (``sh -c '...'``). For text a backend renders on its own (a Kubernetes Volcano job as
    YAML, a Ray job's repr) where the names no longer stand next to their values: :func:`mask_values`."""
    found = [str(v) for k, v in env.items() if is_secret_name(str(k)) and str(v)]
    _argv_secrets([str(a) for a in args], found, depth=0)
    return list(dict.fromkeys(v for v in found if v and v != MASK))


def _argv_secrets(argv: List[str], found: List[str], depth: int) -> None:
    for arg, masked in zip(argv, mask_argv(argv)):
        if arg == masked:
            continue
        if masked == MASK:
            found.append(arg)
        elif masked.endswith(MASK) and arg.startswith(masked[: -len(MASK)]):
            found.append(arg[len(masked) - len(MASK) :])  # --password=x, NAME=x
        elif depth < 2:  # a script: the words it hides, one level down
            try:
                words = shlex.split(arg)
            except ValueError:
                found.append(arg)
                continue
            before = len(found)
            _argv_secrets(words, found, depth + 1)
            if len(found) == before:  # hidden for a reason we cannot name: hide it whole
                found.append(arg)
        else:
            found.append(arg)


def mask_values(text: str, values: Sequence[str]) -> str:
    """``text`` with every occurrence of each of ``values`` (as written, and as JSON, YAML or ``repr``
    would quote it) masked, longest first, then with URL credentials masked: the rule applied to text whose
    layout is a backend's own."""
    forms: List[str] = []
    for value in values:
        forms += [value, json.dumps(value)[1:-1], repr(value)[1:-1], value.replace("'", "''")]
    for form in sorted(set(f for f in forms if f), key=len, reverse=True):
        text = text.replace(form, MASK)
    return mask_urls(text)
