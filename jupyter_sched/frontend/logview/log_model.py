"""Several replica streams multiplexed into bounded views: the model behind the notebook's log pane and
``job.logs()`` (no widgets, no HTML: the notebook renders it, ``jupyter_sched.notebook.panes.log_model``).

One :class:`~jupyter_sched.logs.TerminalBuffer` per source (a replica's stdout, stderr, or combined log),
so partial lines and ``\\r`` frames of two replicas never mix (ipyparallel#591). Followers hand over raw
log items with :meth:`LogMux.push`, each with the time it was written (lock-free: a ``deque.append``); the
owner calls :meth:`LogMux.drain` under its lock, which passes them through a
:class:`~jupyter_sched.logs.reorder.Reorder` (held at most ``reorder_s``, released in the order they were
written, not the order two followers happened to deliver them) and feeds them to the terminals in runs
per source, so a flood costs one ``feed`` per run rather than per line. Each committed line remembers the
sequence number of the run that committed it, which is how views of several sources interleave lines in
the order they were written. Memory is bounded by ``keep_lines`` lines of ``max_line_chars`` per source; the
counts of everything else are kept so a pane can say how much it does not show. A run far longer than
``keep_lines`` has its oldest lines counted without being rendered (they could never be shown), which is
what keeps a flood cheap.
"""

from __future__ import annotations

import heapq
import itertools
import re
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Deque, Dict, List, Optional, Sequence, Tuple, Type

from jupyter_sched.frontend.logview.metric_lines import without_metric_lines
from jupyter_sched.frontend.logview.printer import gutter as text_gutter
from jupyter_sched.logs import Line, TerminalBuffer
from jupyter_sched.logs.interleave import interleave
from jupyter_sched.logs.reorder import WINDOW_S, Reorder
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.specs import AppStatus

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner

ALL = "all"
KEEP_LINES = 5000
"""Lines kept per source by default (the notebook's ``SchedMagics.keep_lines``)."""
MAX_LINE_CHARS = 4000
"""Characters kept per line by default, the rest counted (``SchedMagics.max_line_chars``)."""
_SEQ = itertools.count()
_SGR = re.compile(r"\x1b\[[0-9;:]*m")


@dataclass(frozen=True)
class Source:
    """One stream of one replica: ``stream`` is ``stdout``, ``stderr`` or ``combined``."""

    role: str
    k: int
    stream: str = "combined"

    @property
    def replica(self) -> str:
        return f"{self.role}/{self.k}"

    @property
    def is_stderr(self) -> bool:
        return self.stream == "stderr"


class LogMux:
    """Bounded terminals for a set of sources, and views (all, or one replica) over them.

    Not thread-safe except :meth:`push` and :meth:`backlog`: the owner serialises everything else.
    """

    def __init__(
        self,
        sources: Sequence[Source],
        keep_lines: int = KEEP_LINES,
        max_line_chars: int = MAX_LINE_CHARS,
        reorder_s: float = 0.0,
    ) -> None:
        """``reorder_s``: how long :meth:`drain` may hold pushed items to merge them in write order (a live
        pane sets :data:`~jupyter_sched.logs.reorder.WINDOW_S` with :meth:`hold`); 0: arrival order."""
        self.sources: List[Source] = list(sources)
        self._terms = [TerminalBuffer(keep_lines, max_line_chars) for _ in self.sources]
        self._seqs: List[Deque[int]] = [deque(maxlen=keep_lines) for _ in self.sources]
        #: Per source, the sequence number of the run that last wrote to its open (unfinished) line.
        self._open_seq: List[Optional[int]] = [None] * len(self.sources)
        self._inbox: List[Deque[Tuple[float, float, str]]] = [deque() for _ in self.sources]
        self._reorder: Reorder[str] = Reorder(len(self.sources), reorder_s, max_held=4 * keep_lines)
        self._ending: List[int] = []
        self._pending_chars = [0] * len(self.sources)
        #: Lines per source that arrived in a batch so large they could never be shown: counted, not kept.
        self.skipped = [0] * len(self.sources)
        self.ended = [False] * len(self.sources)
        self.notices: List[str] = []
        #: Bumped whenever a rendering may change.
        self.version = 0
        #: Each replica (``role/k``) once, in the order of the sources.
        self.replicas: List[str] = list(dict.fromkeys(s.replica for s in self.sources))
        #: The width of the widest replica label: gutters line up.
        self.width = max((len(r) for r in self.replicas), default=0)

    # -- input (followers) ------------------------------------------------------------------------------
    def hold(self, reorder_s: float = WINDOW_S) -> None:
        """Hold pushed items up to ``reorder_s`` seconds to release them in the order they were written."""
        self._reorder.window = reorder_s

    def push(self, index: int, item: str, ts: Optional[float] = None) -> None:
        """Queue one raw log item of source ``index``, written at ``ts`` (``time.time()`` seconds; default:
        now, which is arrival order); safe from one follower thread per source without a lock
        (``deque.append`` is atomic; the character count is only read by that follower)."""
        self._inbox[index].append((time.time() if ts is None else ts, time.monotonic(), item))
        self._pending_chars[index] += len(item)

    def backlog(self, index: int) -> Tuple[int, int]:
        """(items, characters) queued for source ``index``."""
        return len(self._inbox[index]), self._pending_chars[index]

    # -- owner side -------------------------------------------------------------------------------------
    def drain(self, now: Optional[float] = None) -> bool:
        """Feed the queued items that are due (see the module docstring) to their terminals, in the order
        they were written; ``now`` is ``time.monotonic()`` by default. True if anything changed."""
        reorder = self._reorder
        for index, inbox in enumerate(self._inbox):
            n = len(inbox)
            if n:
                self._pending_chars[index] = 0
                reorder.push_many(index, [inbox.popleft() for _ in range(n)])
        if not reorder.held() and not self._ending:
            return False
        released = reorder.release(time.monotonic() if now is None else now)
        for index, run in itertools.groupby(released, key=lambda entry: entry[1]):
            self._feed_items(index, [entry[2] for entry in run], next(_SEQ))
        finished = [i for i in self._ending if not reorder.held(i)]
        for index in finished:
            self._ending.remove(index)
            self._terms[index].flush()
            self.ended[index] = True
        if not released and not finished:
            return False
        self.version += 1
        return True

    def feed_items(self, index: int, items: Sequence[str]) -> None:
        """Feed log items of one source at once (a snapshot); same effect as pushing them and draining."""
        self._feed_items(index, list(items), next(_SEQ))
        self.version += 1

    def _feed_items(self, index: int, items: List[str], seq: int) -> None:
        """Feeds a run of items of one source. When the run holds far more lines than are kept, the
        oldest whole lines are only counted (and their colour changes applied), never rendered: they would
        scroll out of the kept window anyway, and rendering is what costs in a flood."""
        keep = self._seqs[index].maxlen or len(items)
        if len(items) > keep:
            start = 0
            if self._terms[index].current.text:  # finish the open line normally
                start = next((i + 1 for i, item in enumerate(items) if "\n" in item), len(items))
            cut, need = len(items), keep
            while cut > start and need > 0:  # keep the items of the last `keep` lines...
                cut -= 1
                need -= items[cut].count("\n")
            while cut > start and not items[cut - 1].endswith("\n"):  # ...and all of the first one
                cut -= 1
            if cut > start:
                if start:
                    self._feed(index, "".join(items[:start]), seq)
                skipped = "".join(items[start:cut])
                self.skipped[index] += skipped.count("\n")
                if "\x1b" in skipped:  # only colours set since the last reset still matter
                    last_reset = max(skipped.rfind("\x1b[0m"), skipped.rfind("\x1b[m"), 0)
                    self._terms[index].feed("".join(_SGR.findall(skipped, last_reset)))
                items = items[cut:]
        self._feed(index, "".join(items), seq)

    def _feed(self, index: int, text: str, seq: int) -> None:
        """Feeds text and numbers the lines it commits. A line that was open before and gets only its end
        now (``"\\n"`` after a progress bar's last frame) keeps the number of the run that last wrote its
        text: it was written then, and a line that another stream wrote between the two (a warning on
        stderr) comes after it, as it did in time."""
        term = self._terms[index]
        before = term.total_lines
        open_seq = self._open_seq[index] if term.current.text else None
        term.feed(text)
        new = term.total_lines - before
        if new:
            seqs = self._seqs[index]
            ends_only = open_seq is not None and text.lstrip("\r").startswith(("\n", "\r\n"))
            first = open_seq if ends_only and open_seq is not None else seq
            seqs.extend([first] + [seq] * (min(new, seqs.maxlen or new) - 1))
        if term.current.text:
            last_line = text.rsplit("\n", 1)[-1]
            if new or last_line.strip("\r") or self._open_seq[index] is None:
                self._open_seq[index] = seq
        else:
            self._open_seq[index] = None

    def end(self, index: int, notice: Optional[str] = None) -> None:
        """The source has no more output (its follower finished); ``notice`` is shown in the pane. Its last
        items may still be held to be merged in time order: it counts as ended once they are fed."""
        self._reorder.end(index)
        self._ending.append(index)
        self.drain()
        if notice:
            self.notices.append(f"{self.sources[index].replica} {self.sources[index].stream}: {notice}")
        self.version += 1

    @property
    def all_ended(self) -> bool:
        return all(self.ended)

    # -- views ------------------------------------------------------------------------------------------
    def views(self) -> List[str]:
        """``all`` followed by each replica (``role/k``)."""
        return [ALL, *self.replicas]

    def _indices(self, view: str) -> List[int]:
        return [i for i, s in enumerate(self.sources) if view == ALL or s.replica == view]

    def total(self, view: str = ALL) -> int:
        """Lines committed so far in ``view`` (shown or not)."""
        return sum(self._terms[i].total_lines + self.skipped[i] for i in self._indices(view))

    def line_count(self, view: str = ALL) -> int:
        """Lines in ``view`` as a person counts them on screen: the committed ones and each open line (a
        progress bar redrawn with ``\\r`` that has no line end yet)."""
        return self.total(view) + sum(1 for i in self._indices(view) if self._terms[i].current.text)

    def rows(self, view: str = ALL, last_n: int = 400) -> Tuple[List[Tuple[int, Line]], int]:
        """The last ``last_n`` rows of ``view`` as ``(source index, line)`` in arrival order (open lines
        of the sources last), and how many committed lines are not among them."""
        indices = self._indices(view)
        opened = [(i, line) for i, line in ((i, self._terms[i].current) for i in indices) if line.text]
        opened = opened[-last_n:] if last_n > 0 else []
        want = max(0, last_n - len(opened))
        tails = []
        for i in indices:
            lines = self._terms[i].lines[-want:] if want else []
            seqs = list(self._seqs[i])[-len(lines):] if lines else []
            tails.append([(seq, i, line) for seq, line in zip(seqs, lines)])
        merged = list(heapq.merge(*tails, key=lambda entry: entry[0]))[-want:] if want else []
        committed = [(i, line) for _, i, line in merged]
        return committed + opened, self.total(view) - len(committed)

    def has_gutter(self, view: str) -> bool:
        """Lines of ``view`` carry a ``role/k`` gutter: the view has several sources."""
        return len(self._indices(view)) > 1

    def plain(self, view: str = ALL, last_n: int = 400) -> List[str]:
        """The rows of ``view`` as plain text, prefixed with ``role/k |`` (``!`` for stderr) when the
        view has several sources."""
        rows, _ = self.rows(view, last_n)
        return [self.prefix(i, self.has_gutter(view)) + line.text for i, line in rows]

    def prefix(self, index: int, gutter: bool = True) -> str:
        if not gutter:
            return ""
        source = self.sources[index]
        return text_gutter(source.replica, self.width, "!" if source.is_stderr else "|")


# -- reading an app's logs into a model ---------------------------------------------------------------------


def app_sources(
    status: Optional[AppStatus],
    role: Optional[str] = None,
    replicas: Optional[Sequence[int]] = None,
    streams: Optional[str] = None,
) -> List[Source]:
    """The sources of an app's replicas: stdout and stderr of each (so stderr can be told apart), or the
    one ``streams`` asked for. Raises ValueError naming the valid roles/replicas for a bad selection."""
    if status is None:
        return []
    roles = {r.role: [rep.id for rep in r.replicas] for r in status.roles}
    if role is not None and role not in roles:
        raise ValueError(f"no role {role!r}; the roles are: {', '.join(roles) or '(none yet)'}")
    kinds = [streams] if streams else ["stdout", "stderr"]
    out: List[Source] = []
    for name, ids in roles.items():
        if role is not None and name != role:
            continue
        if replicas is not None:
            bad = [k for k in replicas if k not in ids]
            if bad:
                raise ValueError(f"role {name!r} has replicas {ids}, not {bad}")
            ids = [k for k in ids if k in replicas]
        out.extend(Source(name, k, kind) for k in sorted(ids) for kind in kinds)
    return out


def read_snapshot(
    runner: "Runner",
    handle: str,
    sources: List[Source],
    keep_lines: int = KEEP_LINES,
    max_line_chars: int = MAX_LINE_CHARS,
    regex: Optional[str] = None,
    since: Optional[datetime] = None,
    until: Optional[datetime] = None,
    mux_type: Type[LogMux] = LogMux,
) -> LogMux:
    """What the sources have logged so far, read on the calling thread. A replica's stdout and stderr are
    fed in the order they were written when its backend keeps a combined log to recover it from
    (:func:`jupyter_sched.logs.interleave`), else stdout first. ``mux_type`` is the model to fill (a front
    end's renderer)."""
    mux = mux_type(sources, keep_lines, max_line_chars)

    def read(role: str, k: int, stream: str) -> List[str]:
        lines = runner.log_lines(handle, role, k, regex=regex, since=since, until=until, streams=Stream(stream))
        return list(without_metric_lines(runner, handle, role, k, lines))  # as the live panes: no marked lines

    items: Dict[int, List[str]] = {}
    for i, s in enumerate(sources):
        try:
            items[i] = read(s.role, s.k, s.stream)
        except Exception as e:  # noqa: BLE001 - one unreadable replica must not hide the others
            mux.end(i, f"cannot read logs: {e}")
    by_replica: Dict[Tuple[str, int], List[int]] = {}
    for i, s in enumerate(sources):
        by_replica.setdefault((s.role, s.k), []).append(i)
    for (role, k), indices in by_replica.items():
        runs = None
        if [sources[i].stream for i in indices] == ["stdout", "stderr"] and all(i in items for i in indices):
            try:  # read after the parts: it holds at least what they hold (any newer output is ignored)
                runs = interleave(read(role, k, "combined"), [items[i] for i in indices])
            except Exception:  # noqa: BLE001 - no combined log here: keep per-stream order
                runs = None
        for part, run in runs if runs is not None else [(j, items[i]) for j, i in enumerate(indices) if i in items]:
            mux.feed_items(indices[part], run)
        for i in indices:
            if i in items:
                mux.end(i)
    return mux
