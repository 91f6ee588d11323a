"""Recovering the write order of two streams from the combined log.

A replica's stdout and stderr are read as separate streams so that stderr can be marked, but read that
way they carry no order between them: a snapshot would show all of stdout, then all of stderr, and a
warning printed between two progress lines would land at the end. Backends that also keep a combined log
in write order (local: ``combined.log``; docker: one merged, timestamped log) let us put the order back:
the combined items are an interleaving of the streams' items, and walking the three lists together says
which stream each combined item came from.

The walk is greedy and linear. It gives up (returns None, and the caller keeps per-stream order) when the
combined log is not an interleaving of whole items: two streams writing partial lines at the same moment
can splice text inside one combined line, and an item equal to the next one of *both* streams followed by
a choice the greedy walk got wrong makes it stop too. Both are rare, and giving up loses nothing.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

__all__ = ["interleave"]


def interleave(combined: Sequence[str], parts: Sequence[Sequence[str]]) -> Optional[List[Tuple[int, List[str]]]]:
    """Runs ``(part index, items)`` that use every item of every part in its order and, concatenated, are
    ``combined`` up to where the parts run out; None if ``combined`` does not start with such an
    interleaving. What ``combined`` has beyond that is ignored: read after the parts, it may hold output
    written in between.

    >>> interleave(["a\\n", "E\\n", "b\\n"], [["a\\n", "b\\n"], ["E\\n"]])
    [(0, ['a\\n']), (1, ['E\\n']), (0, ['b\\n'])]
    """
    pos = [0] * len(parts)
    left = sum(len(part) for part in parts)
    runs: List[Tuple[int, List[str]]] = []
    for item in combined:
        if not left:
            break
        for i, part in enumerate(parts):  # first match wins: the greedy choice
            if pos[i] < len(part) and part[pos[i]] == item:
                pos[i] += 1
                left -= 1
                if runs and runs[-1][0] == i:
                    runs[-1][1].append(item)
                else:
                    runs.append((i, [item]))
                break
        else:
            return None
    return None if left else runs
