"""A notebook's parameters, by papermill's conventions: read from the ``parameters`` cell, injected after it.

papermill (nteract/papermill) set the conventions users already follow, so a notebook written for it runs
here unchanged and the other way round:

* the cell tagged ``parameters`` holds the defaults, one ``name = value  # help`` a line (an annotation
  ``name: float = 0.1`` or a ``# type: float`` comment gives the type); :func:`inspect_cell` reads it into
  papermill's shape, ``{name: {"name", "inferred_type_name", "default", "help"}}``, where the default is
  the source text and the type ``"None"`` when none is written;
* the values are written as Python literals in a new cell tagged ``injected-parameters``, whose first line
  is ``# Parameters``, right after the ``parameters`` cell (or first, when there is none), replacing an
  injected cell a run left before rather than adding another; ``metadata.papermill.parameters`` holds them.

Only JSON's types are written as literals (strings quoted, non-finite floats as ``float('nan')``): a value
that is not one of them is refused, naming it; ``raw`` names whose values are Python expressions, written
as they are. Nothing here imports nbformat: a notebook is the JSON dict nbformat's v4 schema describes.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"
COMMENT = "# Parameters"

# papermill's PythonTranslator.PARAMETER_PATTERN (its inspection's grammar, so our reading equals its own)
PATTERN = re.compile(
    r"^(?P<target>\w[\w_]*)\s*(:\s*[\"']?(?P<annotation>\w[\w_\[\],\s]*)[\"']?\s*)?=\s*(?P<value>.*?)"
    r"(\s*#\s*(type:\s*(?P<type_comment>[^\s]*)\s*)?(?P<help>.*))?$"
)


def source_text(cell: Mapping[str, Any]) -> str:
    """A cell's source, which the file format allows as a string or a list of lines."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def tags(cell: Mapping[str, Any]) -> List[str]:
    found = (cell.get("metadata") or {}).get("tags") or []
    return [str(t) for t in found] if isinstance(found, list) else []


def tagged(nb: Mapping[str, Any], tag: str) -> int:
    """The index of the first cell tagged ``tag``, or -1."""
    return next((i for i, cell in enumerate(nb.get("cells") or []) if tag in tags(cell)), -1)


def inspect_cell(source: str) -> Dict[str, Dict[str, str]]:
    """The parameters a ``parameters`` cell's ``source`` defines, as papermill's ``inspect_notebook`` gives
    them. A definition may span lines (a dict or list): its help is the comment on its last line."""

    def flatten(lines: List[str]) -> str:
        flat = "".join((line[: line.index("#")] if "#" in line else line).strip() for line in lines[:-1])
        return flat + (lines[-1].strip() if lines else "")

    groups: List[str] = []
    pending: List[str] = []
    for line in source.splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        equals = line.count("=")
        if equals:
            groups.append(flatten(pending))
            pending = []
            if equals > 1:  # papermill skips what it cannot parse (``a = b == c``), and so do we
                continue
        pending.append(line)
    groups.append(flatten(pending))
    found: Dict[str, Dict[str, str]] = {}
    for definition in groups:
        match = PATTERN.match(definition) if definition else None
        if match is None:
            continue
        name = match.group("target").strip()
        type_name = str(match.group("annotation") or match.group("type_comment") or None).strip()
        found[name] = {"name": name, "inferred_type_name": type_name, "default": str(match.group("value")).strip(),
                       "help": str(match.group("help") or "").strip()}  # fmt: skip
    return found


def inspect_nb(nb: Mapping[str, Any]) -> Dict[str, Dict[str, str]]:
    """The parameters of notebook ``nb`` (a dict), ``{}`` when no cell is tagged ``parameters``."""
    index = tagged(nb, PARAMETERS_TAG)
    return inspect_cell(source_text(nb["cells"][index])) if index >= 0 else {}


def literal(value: Any, where: str) -> str:
    """``value``, a JSON type, as a Python literal; anything else is a TypeError naming ``where``."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"parameter {where}: a dict key must be a string (got {k!r}), as in JSON")
            items.append(f"{k!r}: {literal(v, f'{where}[{k!r}]')}")
        return "{" + ", ".join(items) + "}"
    raise TypeError(
        f"parameter {where} is a {type(value).__name__}; a notebook's parameters are JSON types (str, int, float,"
        f" bool, None, lists and dicts of them); pass a Python expression as text with raw={{{where.split('[')[0]!r}:"
        " '...'}} instead"
    )


def cell_source(params: Mapping[str, Any], raw: Mapping[str, str]) -> str:
    """The injected cell's source: ``# Parameters``, then one assignment a line (values, then expressions)."""
    lines = [COMMENT]
    lines += [f"{name} = {literal(value, name)}" for name, value in params.items()]
    lines += [f"{name} = {expr}" for name, expr in raw.items()]
    return "\n".join(lines) + "\n"


def inject(
    nb: Dict[str, Any], params: Mapping[str, Any], raw: Optional[Mapping[str, str]] = None
) -> Tuple[Dict[str, Any], bool]:
    """``nb`` (changed in place, and returned) with the injected cell, and whether it has a ``parameters``
    cell (when not, the injected cell went first). ``metadata.papermill.parameters`` records the values,
    expressions as their text."""
    raw = dict(raw or {})
    cell: Dict[str, Any] = {
        "cell_type": "code", "execution_count": None, "id": "injected-parameters",
        "metadata": {"tags": [INJECTED_TAG]}, "outputs": [], "source": cell_source(params, raw),
    }  # fmt: skip
    cells = list(nb.get("cells") or [])
    earlier, defaults = tagged(nb, INJECTED_TAG), tagged(nb, PARAMETERS_TAG)
    if earlier >= 0:
        cells[earlier] = cell
    else:
        cells.insert(defaults + 1 if defaults >= 0 else 0, cell)
    taken = {c.get("id") for c in cells if c is not cell}
    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) < (4, 5):
        del cell["id"]  # cell ids came with nbformat 4.5: an older notebook's schema refuses them
    elif cell["id"] in taken:  # ids are unique; a copied injected cell may hold ours
        cell["id"] = next(f"{INJECTED_TAG}-{i}" for i in range(1, len(cells) + 2) if f"{INJECTED_TAG}-{i}" not in taken)
    nb["cells"] = cells
    papermill = nb.setdefault("metadata", {}).setdefault("papermill", {})
    papermill["parameters"] = {**dict(params), **raw}
    return nb, defaults >= 0
