"""The HTTP API under ``{base_url}jupyter-sched/api/``; every route needs the server's login.

========================================  ==================================================================
``GET  jobs``                              the list: ``?offset=&limit=`` (at most 500 entries a page),
                                           ``?notebook=&session=&scheduler=&state=&sweep=`` filters
``GET  jobs/ended``                        the jobs that ended since ``?since=CURSOR`` (each once, with its row) and
                                           the cursor to give next; without ``since``, the cursor of now
``GET  jobs/<handle>``                     one job: its row, status per replica (secrets masked), usage, tracker
``GET  jobs/<handle>/logs``                a snapshot of replica ``?role=&k=`` (``&lines=&stream=``)
``GET  jobs/<handle>/logs/stream``         the same replica live, as server-sent events (``event: log``)
``GET  jobs/<handle>/metrics``             one replica's metric series (``?role=&k=``, the first role's replica
                                           0 by default; ``&keys=a,b&since=CURSOR&max_points=N``), downsampled
``GET  jobs/<handle>/metrics/stream``      the same replica live, as server-sent events (``event: metrics``)
``POST jobs/<handle>/cancel``              cancel (XSRF-checked like every non-GET request of the server)
========================================  ==================================================================

``<handle>`` is the app handle URL-encoded as one path segment (``encodeURIComponent``). It is checked as
the CLI checks it (a known scheduler, and a session and app id that are plain names, so no path is built
outside the log dir) before anything reads it: a malformed one is a 400 naming the problem, an unknown one
a 404 (a handle is looked up under its own scheduler only). A backend that cannot answer is a 503 (its
service is down: ``Retry-After`` says when to ask again) or a 502 (it answered with an error), whose
``message`` is the error on one line, masked, with the hint the command line gives; the server logs one
line, not a traceback. Every blocking call (status, log reads, cancel) runs on the extension's thread pool,
never on the server's event loop; listings are refreshed on a thread of their own (:mod:`.index`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.iostream import StreamClosedError

from jupyter_sched.frontend.errors import UsageError
from jupyter_sched.frontend.jobs import metrics as job_metrics
from jupyter_sched.frontend.jobs.listing import first_role
from jupyter_sched.frontend.targets import check_handle
from jupyter_sched.logs.metric_lines import KEY_RE
from jupyter_sched.server import rows as table
from jupyter_sched.server.ended import BadCursor, parse_since
from jupyter_sched.server.index import JobIndex, UnknownJob
from jupyter_sched.server.logs import STREAMS, Cursor, Followers, TooManyFollowers, snapshot
from jupyter_sched.specs import MalformedAppHandleException, UnknownAppException
from jupyter_sched.specs.errors import BackendUnavailableError
from jupyter_sched.specs.output.masking import mask_out
from jupyter_sched.specs.status.handles import parse_safe_handle

AUTH_RESOURCE = "jupyter_sched"
"""The resource name jupyter_server's authorizer sees for every route here."""
T = TypeVar("T")
TICK_S = 0.25
"""How often a live log stream looks for new lines (at most four events a second)."""
KEEPALIVE_S = 15.0
RETRY_AFTER_S = 10
"""What a 503 asks a client to wait before asking again."""
_UNREACHABLE_NAMES = frozenset({"ConnectionError", "ConnectTimeout", "ReadTimeout", "Timeout", "NewConnectionError",
                                "MaxRetryError"})  # fmt: skip
"""Exception classes of HTTP clients (requests, urllib3: a Ray dashboard, a cluster's API) that say the service
could not be reached; matched by name, so the server imports none of them."""
QUERY = ("offset", "limit", "notebook", "session", "scheduler", "state", "sweep")
MAX_POINTS = 1000
"""Points per series a metrics answer has unless ``?max_points=`` says otherwise."""
MAX_POINTS_CAP = 5000
MAX_KEYS = 64
METRICS_TICK_S = 0.5
"""How often a live metrics stream reads its replica's records (a chart is redrawn at most twice a second)."""
STATUS_EVERY_S = 2.0
"""How often a live metrics stream asks whether its job has ended (the index caches running statuses)."""


class StreamSlots:
    """A count of open live streams of one kind, up to a limit (on the event loop: no lock needed)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0

    def take(self) -> bool:
        if self.open >= self.limit:
            return False
        self.open += 1
        return True

    def give(self) -> None:
        self.open = max(0, self.open - 1)


class Context:
    """What the handlers share: the job index, the log followers, the thread pool."""

    def __init__(self, index: JobIndex, followers: Followers, executor: ThreadPoolExecutor,
                 max_snapshot_lines: int) -> None:  # fmt: skip
        self.index = index
        self.followers = followers
        self.executor = executor
        self.max_snapshot_lines = max_snapshot_lines
        self.metric_streams = StreamSlots(followers.max_followers)

    def close(self) -> None:
        self.followers.stop_all()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.index.close()


class Base(APIHandler):
    auth_resource = AUTH_RESOURCE

    def initialize(self, context: Context) -> None:
        self.ctx = context

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """JSON ``{"message", "reason"}`` as every API of the server; the message as written (tornado keeps
        an argument-less message with each ``%`` doubled), through the masking rule. An error of ours never
        carries a traceback: the one-line message says it all."""
        exc = (kwargs.get("exc_info") or (None, None, None))[1]
        if isinstance(exc, web.HTTPError) and exc.log_message and not exc.args:
            self.set_header("Content-Type", "application/json")
            if status_code == 503:
                self.set_header("Retry-After", str(RETRY_AFTER_S))
            message = mask_out(exc.log_message.replace("%%", "%"))
            self.finish(json.dumps({"message": message, "reason": exc.reason}))
            return
        super().write_error(status_code, **kwargs)

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.ctx.executor, fn, *args)

    def query_arg(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """A query argument exactly as sent. Tornado's ``get_query_argument`` drops C0 control characters and
        strips whitespace, so a role named with one (``tr\x1bain``, a trailing U+2028) would be asked for
        under another name and not found: the job view could not follow that replica's log."""
        values = self.request.query_arguments.get(name)
        if not values:
            return default
        return values[-1].decode("utf-8", errors="replace")

    def handle_arg(self, raw: str) -> str:
        """The handle in the URL, checked as the CLI checks it: 400 if malformed or unsafe."""
        try:
            handle = check_handle(raw)
            parse_safe_handle(handle)
        except (UsageError, MalformedAppHandleException, ValueError) as e:
            raise web.HTTPError(400, f"bad job handle: {e}") from None
        return handle

    async def on_job(self, fn: Callable[..., T], handle: str, *args: Any) -> T:
        """``fn(handle, *args)`` off the event loop; a job the index does not know is a 404 that says why, a
        backend that cannot answer a 503 or 502 (:func:`backend_failure`)."""
        try:
            return await self.blocking(fn, handle, *args)
        except (UnknownJob, UnknownAppException):
            raise web.HTTPError(404, f"no job {handle}: it was never submitted, or its records were removed") from None
        except web.HTTPError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever a backend raised, the client gets one masked line
            raise backend_failure(handle, e) from None

    async def job_status(self, handle: str) -> Any:
        return await self.on_job(self.ctx.index.status, handle)

    async def metrics_request(self, raw: str) -> Tuple[str, Dict[str, Any], Any]:
        """A metrics route's handle, checked query and the job's status (400/404 as the other routes)."""
        handle = self.handle_arg(raw)
        query = metrics_query(self.get_query_argument, self.query_arg)
        return handle, query, await self.job_status(handle)

    def metrics_sources(self, handle: str) -> Tuple[Any, job_metrics.LastValues]:
        """The job's runner and the index's metrics directories (what :func:`metrics_answer` reads)."""
        return self.ctx.index.runner_for(handle), self.ctx.index.lister.metrics

    def replica_args(self, status: Any) -> Tuple[str, int, str]:
        """``?role=&k=&stream=``, checked against the job's replicas: 400 if malformed, 404 if absent."""
        role = self.query_arg("role")
        raw_k = self.get_query_argument("k", "0")
        stream = self.get_query_argument("stream", "combined")
        if stream not in STREAMS:
            raise web.HTTPError(400, f"stream={stream!r}: give one of {', '.join(STREAMS)}")
        try:
            k = int(raw_k)
        except ValueError:
            raise web.HTTPError(400, f"k={raw_k!r}: give a replica number (0, 1, ...)") from None
        roles = {r.role: sorted(rep.id for rep in r.replicas) for r in status.roles}
        if role is None:
            if not roles:
                raise web.HTTPError(404, "this job has no replicas yet (it has not started)")
            role = next(iter(roles))
        if role not in roles:
            raise web.HTTPError(404, f"no role {role!r}; the job's roles are: {', '.join(roles) or '(none yet)'}")
        if k not in roles[role]:
            have = ", ".join(str(i) for i in roles[role]) or "none yet"
            raise web.HTTPError(404, f"role {role!r} has no replica {k}; its replicas are: {have}")
        return role, k, stream


class JobsHandler(Base):
    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        try:
            query = table.check_query({key: self.get_query_argument(key, None) for key in QUERY})
        except ValueError as e:
            raise web.HTTPError(400, str(e)) from None
        listing = self.ctx.index.listing_now()
        if listing is None:  # the very first: wait for it, on a worker thread
            listing = await self.blocking(self.ctx.index.listing)
        filters: Dict[str, Optional[str]] = query["filters"]
        rows = [r for r in listing.rows if table.matches(r, filters)]
        sweep = table.sweep_of_page(rows, filters["sweep"])
        body = table.page(table.entries(rows, filters["sweep"]), query["offset"], query["limit"], sweep)
        body.update(
            notices=listing.notices, sessions=listing.sessions, schedulers=listing.schedulers,
            generated=listing.at, apps=len(rows), listed_in=round(listing.seconds, 3),
        )  # fmt: skip
        self.finish(json.dumps(body))


class EndedHandler(Base):
    """What the listing thread saw end since the client's cursor (:mod:`.ended`): the notifications' source,
    so a job that ran between two polls still notifies. Asking counts as wanting a fresh listing (one is
    started if the last is stale), so a client that polls this alone keeps the ends coming."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        try:
            since = parse_since(self.get_query_argument("since", None))
        except BadCursor as e:
            raise web.HTTPError(400, str(e)) from None
        index = self.ctx.index
        if index.listing_now() is None or not index.ended.observed:  # nothing is known before the first
            await self.blocking(index.listing)
        cursor, rows, truncated = index.ended.since(since)
        self.finish(json.dumps({"cursor": str(cursor), "jobs": [r.to_json() for r in rows], "truncated": truncated}))


class JobHandler(Base):
    @web.authenticated
    @authorized("read")
    async def get(self, raw: str) -> None:
        detail = await self.on_job(self.ctx.index.detail, self.handle_arg(raw))
        self.finish(json.dumps(detail))


class CancelHandler(Base):
    @web.authenticated
    @authorized("write")
    async def post(self, raw: str) -> None:
        result = await self.on_job(self.ctx.index.cancel, self.handle_arg(raw))
        self.finish(json.dumps(result))


class LogHandler(Base):
    @web.authenticated
    @authorized("read")
    async def get(self, raw: str) -> None:
        handle = self.handle_arg(raw)
        status = await self.job_status(handle)
        role, k, stream = self.replica_args(status)
        raw_lines = self.get_query_argument("lines", "400")
        top = self.ctx.max_snapshot_lines
        try:
            lines = int(raw_lines)
            if not 1 <= lines <= top:
                raise ValueError
        except ValueError:
            raise web.HTTPError(400, f"lines={raw_lines!r}: give 1 to {top}") from None
        runner = self.ctx.index.runner_for(handle)
        body = await self.on_job(lambda h: snapshot(runner, h, role, k, lines, stream), handle)
        body["state"] = status.state.name
        self.finish(json.dumps(body))


class EventStream(Base):
    """A route that answers with server-sent events until it ends or its client leaves (``_closed``)."""

    _closed = False

    def on_connection_close(self) -> None:
        self._closed = True

    def open_stream(self) -> None:
        self.set_status(200)
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")

    async def send(self, text: str) -> None:
        """One event (``event: ...\\ndata: ...\\n\\n``) or comment, sent now."""
        self.write(text)
        await self.flush()

    def end_stream(self) -> None:
        if not self._closed:
            self.finish(set_content_type="text/event-stream; charset=utf-8")


class LogStreamHandler(EventStream):
    """Server-sent events: ``event: log`` with ``data:`` one JSON object per change (see
    :meth:`jupyter_sched.server.logs.ReplicaLog.diff`), at most every :data:`TICK_S`; the stream ends after
    the event that says ``"ended": true``."""

    @web.authenticated
    @authorized("read")
    async def get(self, raw: str) -> None:
        handle = self.handle_arg(raw)
        status = await self.job_status(handle)
        role, k, stream = self.replica_args(status)
        try:
            log = self.ctx.followers.attach(self.ctx.index.runner_for(handle), handle, role, k, stream)
        except TooManyFollowers as e:
            raise web.HTTPError(503, str(e)) from None
        self.open_stream()
        cursor = Cursor()
        quiet = 0.0
        try:
            while not self._closed:
                event = log.diff(cursor)
                if event is not None:
                    await self.send(f"event: log\ndata: {json.dumps(event)}\n\n")
                    quiet = 0.0
                    if event["ended"]:
                        break
                elif quiet >= KEEPALIVE_S:
                    await self.send(": keepalive\n\n")
                    quiet = 0.0
                await asyncio.sleep(TICK_S)
                quiet += TICK_S
        except StreamClosedError:
            self._closed = True
        finally:
            self.ctx.followers.detach(log)
        self.end_stream()


class MetricsHandler(Base):
    """One replica's metric series, read from its records file from a cursor (so a client polling with
    ``?since=`` reads each record once), each series downsampled to ``max_points`` keeping each bucket's
    min and max (:func:`~jupyter_sched.frontend.jobs.metrics.downsample`), with the replica's summary and
    the job's replicas that have metrics. One replica per answer, rank 0 (the first role's replica 0) by
    default: a job of 20 replicas is charted one at a time, and the answer stays bounded. Torn or corrupt
    lines are skipped and counted in ``skipped``, never an error."""

    @web.authenticated
    @authorized("read")
    async def get(self, raw: str) -> None:
        handle, query, status = await self.metrics_request(raw)
        body = await self.on_job(metrics_answer, handle, *self.metrics_sources(handle), status, query)
        self.finish(json.dumps(mask_out(body), allow_nan=False))


class MetricsStreamHandler(EventStream):
    """Server-sent events: ``event: metrics`` with ``data:`` the body of ``GET jobs/<handle>/metrics`` (same
    query) holding only the records written since the previous event, the first event every record so far.
    The replica's records are read every :data:`METRICS_TICK_S`; an event is sent only when there are new
    points or the summary changed. Once the job has ended its files are read to the end, and the last
    event says ``"ended": true``; the stream ends after it. Like the log stream: at most
    ``max_log_streams`` open at once (a 503 beyond), a keepalive comment every :data:`KEEPALIVE_S`, and a
    client that leaves ends its stream at the next tick (nothing is kept for it)."""

    @web.authenticated
    @authorized("read")
    async def get(self, raw: str) -> None:
        handle, query, status = await self.metrics_request(raw)
        runner, directories = self.metrics_sources(handle)
        slots = self.ctx.metric_streams
        if not slots.take():
            raise web.HTTPError(503, f"{slots.limit} live metric streams are open, the most this server keeps; "
                                     "close a job view, or raise c.JobsServer.max_log_streams")  # fmt: skip
        self.open_stream()
        first, summary, quiet, asked = True, None, 0.0, 0.0
        try:
            while not self._closed:
                ended = status.is_terminal()  # seen before this read: the read then has every record
                body = await self.on_job(metrics_answer, handle, runner, directories, status, query)
                query["cursor"] = parse_cursor(body["cursor"])
                if first or ended or body["points"] or body["summary"] != summary:
                    body["ended"] = ended
                    await self.send(f"event: metrics\ndata: {json.dumps(mask_out(body), allow_nan=False)}\n\n")
                    first, summary, quiet = False, body["summary"], 0.0
                    if ended:
                        break
                elif quiet >= KEEPALIVE_S:
                    await self.send(": keepalive\n\n")
                    quiet = 0.0
                await asyncio.sleep(METRICS_TICK_S)
                quiet += METRICS_TICK_S
                asked += METRICS_TICK_S
                if asked >= STATUS_EVERY_S:
                    status, asked = await self.job_status(handle), 0.0
        except StreamClosedError:
            self._closed = True
        finally:
            slots.give()
        self.end_stream()


def metrics_query(arg: Callable[[str, Optional[str]], Optional[str]],
                  raw: Optional[Callable[[str, Optional[str]], Optional[str]]] = None) -> Dict[str, Any]:  # fmt: skip
    """``?keys=&since=&max_points=&role=&k=`` checked: a 400 naming the parameter and the fix. ``raw`` reads
    the role as sent (:meth:`Base.query_arg`), control characters and all."""
    raw_keys = arg("keys", None) or ""
    keys = [k.strip() for k in raw_keys.split(",") if k.strip()] or None
    for key in keys or []:
        if KEY_RE.fullmatch(key) is None:
            raise web.HTTPError(400, f"keys={raw_keys!r}: {key!r} is not a metric key; give keys of 1 to 128 "
                                     "characters of A-Z a-z 0-9 _ . / -, separated by commas")  # fmt: skip
    if keys is not None and len(keys) > MAX_KEYS:
        raise web.HTTPError(400, f"keys=: {len(keys)} keys; give at most {MAX_KEYS}")
    raw_points = arg("max_points", None)
    try:
        max_points = MAX_POINTS if raw_points is None else int(raw_points)
        if not job_metrics.MIN_POINTS <= max_points <= MAX_POINTS_CAP:
            raise ValueError
    except ValueError:
        low = job_metrics.MIN_POINTS
        raise web.HTTPError(400, f"max_points={raw_points!r}: give a number of points per series from {low} to "
                                 f"{MAX_POINTS_CAP} (default {MAX_POINTS})") from None  # fmt: skip
    raw_k = arg("k", None)
    try:
        k = None if raw_k is None else int(raw_k)
        if k is not None and k < 0:
            raise ValueError
    except ValueError:
        raise web.HTTPError(400, f"k={raw_k!r}: give a replica number (0, 1, ...)") from None
    since = arg("since", None)
    cursor = None if since in (None, "") else parse_cursor(since)
    return {"keys": keys, "max_points": max_points, "role": (raw or arg)("role", None), "k": k, "cursor": cursor}


def make_cursor(role: str, k: int, offset: int) -> str:
    """An opaque cursor: where the next read of ``role``/``k``'s records starts."""
    raw = json.dumps([role, k, offset], separators=(",", ":")).encode()
    return "m1." + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_cursor(text: str) -> Tuple[str, int, int]:
    """What :func:`make_cursor` wrote, or a 400 that says ``since`` is not such a cursor."""
    try:
        if not text.startswith("m1."):
            raise ValueError
        body = text[3:]
        role, k, offset = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        if not (isinstance(role, str) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                                              for x in (k, offset))):  # fmt: skip
            raise ValueError
    except (ValueError, TypeError, binascii.Error):
        raise web.HTTPError(400, f"since={text[:80]!r}: give the cursor of a previous answer as it was (or leave "
                                 "since out for every record)") from None  # fmt: skip
    return role, k, offset


def metrics_answer(handle: str, runner: Any, directories: job_metrics.LastValues, status: Any,
                   query: Dict[str, Any]) -> Dict[str, Any]:  # fmt: skip
    """The body of ``GET jobs/<handle>/metrics`` (blocking: reads files; the handle first, as
    :meth:`Base.on_job` calls it)."""
    directory = directories.directory(runner, handle)
    with_files = job_metrics.replicas(directory)
    roles = [r.role for r in status.roles]
    cursor = query["cursor"]
    role = query["role"] or (cursor[0] if cursor else None) or first_role(status)
    role = role or (with_files[0][0] if with_files else None)
    k = query["k"] if query["k"] is not None else (cursor[1] if cursor else 0)
    if query["role"] is not None and role not in roles and role not in {r for r, _ in with_files}:
        have = ", ".join(roles) or "(none yet)"
        raise web.HTTPError(404, f"role={role!r}: no such role; the job's roles are: {have}")
    if cursor is not None and (cursor[0], cursor[1]) != (role, k):
        raise web.HTTPError(400, f"since=: that cursor is of replica {cursor[0]}/{cursor[1]}, not {role}/{k}; give "
                                 "a cursor of the replica asked for, or leave since out")  # fmt: skip
    offset = cursor[2] if cursor else 0
    if role is None or not directory:
        series = job_metrics.Series(series={key: [] for key in query["keys"] or []}, cursor=offset, skipped=0,
                                    points=0)  # fmt: skip
        summary: Dict[str, Any] = {}
    else:
        series = job_metrics.read_series(directory, role, k, offset, query["keys"], query["max_points"])
        summary = job_metrics.stats_json(job_metrics.read_summary(directory, role, k), query["keys"])
    return {
        "handle": handle, "role": role, "replica": k, "cursor": make_cursor(role or "", k, series.cursor),
        "series": series.series, "summary": summary, "skipped": series.skipped, "points": series.points,
        "max_points": query["max_points"], "replicas": [{"role": r, "replica": i} for r, i in with_files],
        "state": status.state.name,
    }  # fmt: skip


def backend_failure(handle: str, e: BaseException) -> web.HTTPError:
    """The HTTP error for a backend that could not answer about ``handle``: 503 if its service cannot be
    reached now (asking later may work), else 502; the message is the backend's own on one line (it carries
    the hint the command line shows, such as how to start a Docker engine), masked."""
    names = {cls.__name__ for cls in type(e).__mro__}
    unreachable = isinstance(e, (BackendUnavailableError, ConnectionError, TimeoutError)) or bool(
        names & _UNREACHABLE_NAMES
    )
    scheduler = handle.partition("://")[0]
    text = " ".join(str(e).split())
    message = mask_out(f"{scheduler}: {type(e).__name__}: {text[:1000]}")
    return web.HTTPError(503 if unreachable else 502, message)


def routes(base: str, context: Context) -> list:
    """Tornado routes under ``base`` (``{base_url}jupyter-sched/api/``)."""
    one = r"(?P<raw>[^/]+)"
    args = {"context": context}
    return [
        (base + r"jobs/?", JobsHandler, args),
        (base + r"jobs/ended/?", EndedHandler, args),
        (base + rf"jobs/{one}/logs/stream/?", LogStreamHandler, args),
        (base + rf"jobs/{one}/logs/?", LogHandler, args),
        (base + rf"jobs/{one}/metrics/stream/?", MetricsStreamHandler, args),
        (base + rf"jobs/{one}/metrics/?", MetricsHandler, args),
        (base + rf"jobs/{one}/cancel/?", CancelHandler, args),
        (base + rf"jobs/{one}/?", JobHandler, args),
    ]
