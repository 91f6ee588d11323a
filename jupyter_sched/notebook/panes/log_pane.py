"""The log pane: one replica or all of them, live, in an ``ipywidgets.HTML`` re-rendered at a few Hz.

Why not an ``Output`` widget: appending to one re-sends every earlier output on each append (quadratic
traffic; 2,000 appends froze JupyterLab for two minutes in the reference measurements). Here followers
are the front ends' one :class:`~jupyter_sched.frontend.logview.follower.LogFollower` per source, each
reading its items, with the time each was written (``Runner.log_items(timed=True)``), into its bounded
buffer; one ticker per pane takes them into a :class:`~jupyter_sched.notebook.panes.log_model.HtmlLogMux`,
which merges stdout and stderr in write order, and, at most once per ``refresh_interval``, sets one trait
(the HTML) under the pane's lock inside ``hold_sync``. A follower whose buffer fills hands it over itself
(so a flood is skimmed in long runs), and its end wakes the ticker. What is sent is bounded (the last
``tail_lines`` lines of at most ``max_line_chars``), and every character of log text is escaped. Lines that
scroll out are counted and the count is shown.
"""

from __future__ import annotations

import functools
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from jupyter_sched.frontend.logview.follower import LogFollower
from jupyter_sched.frontend.logview.log_model import ALL, LogMux, Source
from jupyter_sched.frontend.logview.metric_lines import timed_text, without_metric_lines
from jupyter_sched.logs.reorder import WINDOW_S
from jupyter_sched.notebook.displays.record import HTML_LOG_CHARS, HTML_LOG_LINES, TEXT_LOG_LINES
from jupyter_sched.notebook.kernel import live
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.kernel.live import Ticker
from jupyter_sched.notebook.panes.log_model import HtmlLogMux
from jupyter_sched.notebook.panes.theme import MONO, PANE_STYLE, esc, fmt_clock, plural
from jupyter_sched.schedulers.api import Stream

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner

BACKLOG_CHARS = 16 << 20
"""Characters a follower may hold before it hands them to the pane itself (so does ``4 * keep_lines``
items): bounds kernel memory when the ticker lags, while letting a flood arrive in runs long enough to be
skimmed."""
MAX_FOLLOWERS = 32
_PRE_STYLE = (
    f"flex:none;margin:0;padding:2px 4px;white-space:pre;{MONO};font-size:12px;line-height:1.35;"
    "background:none;border:none;color:inherit"
)
_BOX_STYLE = (
    "display:flex;flex-direction:column-reverse;max-height:{height}px;overflow:auto;"
    "border:1px solid rgba(128,128,128,0.3);border-radius:3px"
)


def follow_limit(sources: List[Source]) -> List[Source]:
    """At most MAX_FOLLOWERS sources: with many replicas, one combined stream each (stderr not tinted)."""
    if len(sources) <= MAX_FOLLOWERS:
        return sources
    combined = list(dict.fromkeys(Source(s.role, s.k, "combined") for s in sources))
    return combined[:MAX_FOLLOWERS]


class LogPane:
    """Widgets over a LogMux: a replica selector, a Follow/Pause toggle and the HTML log view."""

    def __init__(
        self, mux: HtmlLogMux, settings: PaneSettings, title: str = "", height_px: int = 360, live: bool = False
    ) -> None:
        """``live``: :meth:`start` follows next (the first render is then the first tick's)."""
        import ipywidgets as w

        self.mux = mux
        self.settings = settings
        self.title = title
        self.height_px = height_px
        self.lock = threading.Lock()
        self.followers: List[LogFollower[Tuple[float, str]]] = []
        self._taken_end: Set[int] = set()  # sources whose follower's end the mux has been told of
        self.ticker: Optional[Ticker] = None
        self.on_all_ended: Optional[Any] = None
        #: Set once following has finished (every source ended, or stop()) and the last render is done.
        self.done = threading.Event()
        self._rendered_version = -1
        self._body = ""
        self._hidden = 0
        self.html = w.HTML(value="")
        self.html.add_class("jsched-log")
        views = mux.views()
        self.selector = w.Dropdown(
            options=views, value=ALL, description="replica", layout=w.Layout(width="auto", flex="0 0 auto")
        )
        #: Whether new lines are shown as they come; the button's label and icon are what a click does.
        self.following = True
        self.follow = w.Button(
            description="Pause", icon="pause", tooltip="stop updating the lines shown (the logs are still read)",
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        #: The pane's controls (a job view puts them into its one row of buttons).
        self.controls: List[Any] = [self.follow]
        if len(views) > 2:
            self.controls.insert(0, self.selector)
        self._on_done: List[Callable[[], None]] = []
        self.widget = w.VBox([w.HBox(self.controls), self.html])
        self.selector.observe(self._on_control, names="value")
        self.follow.on_click(self._on_follow)
        self._live = live
        self._stopped = False
        if not live:
            self.render()

    # -- live following ---------------------------------------------------------------------------------
    def start(
        self,
        runner: "Runner",
        handle: str,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> "LogPane":
        """Starts one follower per source and the refresh ticker."""
        return self.follow_items([_log_items(runner, handle, s, regex, since, until) for s in self.mux.sources])

    def follow_items(self, openers: List[Callable[[], Iterable[Tuple[float, str]]]]) -> "LogPane":
        """Follows ``openers[i]()`` (timed items) as source ``i``: one follower each, and the ticker."""
        self._live = True
        self.mux.hold(WINDOW_S)
        for i, (s, opener) in enumerate(zip(self.mux.sources, openers)):
            self.followers.append(
                LogFollower(
                    opener, f"jupyter_sched-log-{s.replica}-{s.stream}", max_items=4 * self.settings.keep_lines,
                    max_chars=BACKLOG_CHARS, on_change=functools.partial(self._on_change, i), size=_item_chars,
                )
            )  # fmt: skip
        self.ticker = Ticker("log-pane", self.settings.refresh_interval, self._tick, self._final)
        for f in self.followers:
            live.register(f)
            f.start()
        self.ticker.start()
        return self

    def stop(self) -> None:
        """Stops following (the job is not touched); the pane keeps what it shows."""
        self._stopped = True
        for f in self.followers:
            f.stop()
        if self.ticker is not None:
            self.ticker.stop()

    def _on_change(self, index: int) -> None:
        """On follower ``index``'s thread: a full buffer is taken now (a flood then reaches the mux in long
        runs, and the follower need not wait for the tick); an end is taken at once and wakes the ticker.
        A first item waits for the tick."""
        follower = self.followers[index]
        if follower.ended:
            self._on_end(index)
            return
        if follower.unread >= follower.max_items or follower.held_chars >= BACKLOG_CHARS:
            with self.lock:
                self._take(index)
                self.mux.drain()  # only this source: the others wait for the tick

    def _take(self, index: int) -> None:
        """Moves what follower ``index`` has read into the mux (under the pane's lock), and its end."""
        batch = self.followers[index].read()
        push = self.mux.push
        for ts, item in batch.items:
            push(index, item, ts)
        if batch.ended and index not in self._taken_end:
            self._taken_end.add(index)
            self.mux.drain()
            error = batch.error
            self.mux.end(index, f"{type(error).__name__}: {error}" if error else None)

    def _catch_up(self) -> None:
        """Under the pane's lock: everything the followers have read goes into the mux, which drains."""
        for index in range(len(self.followers)):
            self._take(index)
        self.mux.drain()

    def _on_item(self, index: int, item: str, ts: Optional[float] = None) -> None:
        """Feeds one item of source ``index`` by hand (no follower), bounded as a follower's backlog is."""
        self.mux.push(index, item, ts)
        items, chars = self.mux.backlog(index)
        if items > 4 * self.settings.keep_lines or chars > BACKLOG_CHARS:
            with self.lock:
                self.mux.drain()

    def _on_end(self, index: int) -> None:
        with self.lock:
            self._take(index)
            done = self.mux.all_ended
        if self.ticker is not None:
            self.ticker.wake()
        if done and self.on_all_ended is not None:
            self.on_all_ended()

    def _tick(self) -> bool:
        with self.lock:
            self._catch_up()
            if self.following:
                self._render_locked()
            return not self.mux.all_ended

    def _final(self) -> None:
        with self.lock:
            self._catch_up()
            self._render_locked(force=True)
            self.done.set()
            callbacks, self._on_done = self._on_done, []
        for callback in callbacks:
            callback()

    @property
    def final(self) -> bool:
        """Nothing more will change: a snapshot, or following has finished."""
        return not self._live or self.done.is_set()

    def when_done(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` once following has finished and the last render is done (now if it has)."""
        with self.lock:
            if not self.final:
                self._on_done.append(callback)
                return
        callback()

    # -- what the cell's record keeps (see .record) -----------------------------------------------------
    def static_html(self, as_of_ts: Optional[float] = None) -> str:
        """The pane as it is now, all replicas, without widgets: the same bounded, escaped tail."""
        with self.lock:
            self._catch_up()
            lines = min(self.settings.tail_lines, HTML_LOG_LINES)
            body, hidden = self.mux.to_html(ALL, lines, min(self.settings.max_update_chars, HTML_LOG_CHARS))
            if not self._live:
                state = "snapshot"
            elif self.mux.all_ended:
                state = "ended"
            else:
                state = f"following, as of {fmt_clock(as_of_ts)}" if as_of_ts is not None else "stopped following"
            return self._frame(ALL, body, hidden, state)

    def static_text(self, last_n: int) -> List[str]:
        """The last ``last_n`` lines as plain text (``role/k |`` gutters), and a first line counting the rest."""
        with self.lock:
            self._catch_up()
            rows, hidden = self.mux.rows(ALL, last_n)
            lines = self.mux.plain(ALL, last_n)
            head = [f"... {plural(hidden, 'earlier line')} not shown"] if hidden > 0 else []
            return head + lines + [f"! {n}" for n in self.mux.notices[-5:]]

    def set_following(self, following: bool) -> None:
        """Resumes or pauses the updates of the lines shown; the button then offers the other."""
        self.following = following
        with self.follow.hold_sync():
            self.follow.description = "Pause" if following else "Follow"
            self.follow.icon = "pause" if following else "play"
            self.follow.tooltip = (
                "stop updating the lines shown (the logs are still read)" if following
                else "show the latest lines again, and keep them updating"
            )  # fmt: skip
        self.render(force=True)

    def _on_follow(self, _button: Any = None) -> None:
        self.set_following(not self.following)

    def shows(self, role: str, k: int, lines: List[str], last_n: Optional[int] = None) -> bool:
        """The pane (all replicas, its last ``last_n`` lines: by default as many as the record keeps) shows
        every one of ``lines`` of that replica: the status pane then need not repeat them."""
        wanted = [line.strip() for line in lines if line.strip()]
        if not wanted:
            return True
        n = min(self.settings.tail_lines, HTML_LOG_LINES) if last_n is None else last_n
        view = f"{role}/{k}"
        with self.lock:
            self._catch_up()
            rows, _ = self.mux.rows(ALL, n)
            seen = {line.text.strip() for i, line in rows if self.mux.sources[i].replica == view}
        return all(line in seen for line in wanted)

    def _on_control(self, change: Dict[str, Any]) -> None:
        self.render(force=True)

    # -- rendering --------------------------------------------------------------------------------------
    def render(self, force: bool = False) -> None:
        with self.lock:
            self._catch_up()
            self._render_locked(force)

    def _render_locked(self, force: bool = False) -> None:
        if not force and self._rendered_version == self.mux.version:
            return
        view = self.selector.value
        if self.following or not self._body:
            body, hidden = self.mux.to_html(view, self.settings.tail_lines, self.settings.max_update_chars)
            self._body, self._hidden = body, hidden
            self._rendered_version = self.mux.version
        value = self._frame(view, self._body, self._hidden, self._state())
        if value != self.html.value:
            with self.html.hold_sync():
                self.html.value = value

    def _frame(self, view: str, body: str, hidden: int, state: str) -> str:
        return frame_html(self.mux, self.title, view, body, hidden, state, self.height_px)

    def _state(self) -> str:
        if not self.mux.sources:
            state = "no replicas to show"
        elif not self.following:
            state = "paused"
        elif not self._live:
            state = "snapshot"
        elif self.mux.all_ended:
            state = "ended"
        elif self._stopped:
            state = "stopped following"
        else:
            state = "following"
        return state

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        """The cell's record of this pane (see .record)."""
        from jupyter_sched.notebook.panes.theme import NO_MATH

        lines = self.static_text(TEXT_LOG_LINES)
        return {
            "text/plain": "\n".join([self.title, *lines] if self.title else lines),
            "text/html": f'<div class="jsched-record jsched-log {NO_MATH}">{self.static_html(as_of_ts)}</div>',
        }

    when_final = when_done

    def poll(self) -> None:
        """Nothing to do: the followers and the ticker keep the pane current."""


def frame_html(mux: LogMux, title: str, view: str, body: str, hidden: int, state: str, height_px: int = 360) -> str:
    """A log pane's HTML: a header (title, view, line counts, state, notices) over the scrolling lines. The
    count is of the lines a person sees, a progress bar's line without its end included."""
    total = mux.line_count(view)
    parts = [f"<b>{esc(title)}</b>" if title else "", esc(view), plural(total, "line")]
    if hidden:
        parts.append(f"{plural(hidden, 'earlier line')} not shown")
    parts.append(state)
    notices = "".join(f'<div style="color:#e75c58">{esc(n)}</div>' for n in mux.notices[-5:])
    text = " \u00b7 ".join(p for p in parts if p)
    return (
        f'<div style="{PANE_STYLE}">'
        f'<div class="jsched-log-header" style="font-size:12px;opacity:0.8">{text}</div>{notices}'
        f'<div style="{_BOX_STYLE.format(height=height_px)}">'
        f'<pre class="jsched-log-text" style="{_PRE_STYLE}">{body}</pre></div></div>'
    )


def _log_items(
    runner: "Runner",
    handle: str,
    source: Source,
    regex: Optional[str],
    since: Optional[datetime],
    until: Optional[datetime],
) -> Callable[[], Iterable[Tuple[float, str]]]:
    """What a follower iterates: the source's log as ``(time written, item)``, followed until its replica
    ends (the pane merges its sources by that time)."""

    def items() -> Iterable[Tuple[float, str]]:
        timed = runner.log_items(
            handle, source.role, source.k, regex=regex, since=since, until=until, should_tail=True,
            streams=Stream(source.stream), timed=True,
        )  # fmt: skip
        # the marked metric lines are data, not output: out of the pane, their records stored
        return without_metric_lines(runner, handle, source.role, source.k, timed, timed_text)

    return items


def _item_chars(timed: Tuple[float, str]) -> int:
    return len(timed[1])
