"""A sweep's grid: a list of keyword dicts as given, or a dict of lists meaning their product.

``{"lr": [0.1, 0.01], "bs": [32, 64]}`` is four points, in ``itertools.product`` order (the last key
varies fastest), which is the order ``sweep.results()`` returns. Bad grids are refused naming the key
or the position and how to write it.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Mapping, Sequence, Union

Grid = Union[Sequence[Mapping[str, Any]], Mapping[str, Sequence[Any]]]


def expand(grid: Grid) -> List[Dict[str, Any]]:
    """The points of ``grid``, in order."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        for key in keys:
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"grid key {key!r}: keys are the function's keyword names (identifiers)")
            values = grid[key]
            if isinstance(values, (str, bytes)) or (
                not isinstance(values, Sequence) and not isinstance(values, (set, range))
            ):
                raise ValueError(
                    f"grid[{key!r}] = {values!r}: give a list of values (e.g. {{{key!r}: [{values!r}]}} for one value)"
                )
            if len(values) == 0:
                raise ValueError(f"grid[{key!r}] is empty: the product would have no points")
        return [dict(zip(keys, combo)) for combo in itertools.product(*(list(grid[k]) for k in keys))]
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence):
        raise ValueError(f"grid must be a list of keyword dicts or a dict of lists, not {type(grid).__name__}")
    points = []
    for i, point in enumerate(grid):
        if not isinstance(point, Mapping):
            raise ValueError(f"grid[{i}] = {point!r}: each point is a dict of keyword arguments, e.g. {{'lr': 0.1}}")
        bad = [k for k in point if not isinstance(k, str) or not k.isidentifier()]
        if bad:
            raise ValueError(f"grid[{i}] key {bad[0]!r}: keys are the function's keyword names (identifiers)")
        points.append(dict(point))
    if not points:
        raise ValueError("grid is empty: give at least one point")
    return points
