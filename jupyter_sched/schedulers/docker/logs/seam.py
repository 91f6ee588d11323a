"""Joining a container's log history with its live output stream, one stream (stdout or stderr) at a time.

Why two sources: the engine's log driver (``json-file``) stores a record only when a line ends (or every
16 KiB, or at exit), so a ``\\r`` progress frame or a prompt without a line end sits in the engine's memory
until the line ends. The live stream (``attach``) carries every write as it happens, but only from the
moment it was opened, at a point of the output nobody tells us. So a follow reads both: the history is
the record of what was written (complete, resumable by timestamp), and the live stream shows the current
line early. :class:`Seam` decides, without timestamps, where the live text starts in the history:

* The first line end the live stream carries ends the *seam line*; the history record that ends with the
  live stream's text of that line (the engine prepends what was written before the attach) is the seam.
  From there on both sources carry the same text: whichever is ahead is emitted, the other is checked
  against it and skipped, so nothing is lost or repeated.
* Before the seam is found, live text of the seam line after its first ``\\r`` is shown once the live
  stream has been quiet a moment (a progress bar moves while its line has not ended), and only after the
  history from before the attach has been read. The line's start up to that ``\\r`` -- what the engine
  held from before the attach -- is known only when the line ends; it is frames the ones shown have
  already overwritten, and coming after them it would leave the line showing a stale frame, so a follow
  skips it: the one place where a follow's items are not all the bytes (a snapshot has them; a follow that
  started before the line did, or a line that ends before anything of it was shown, is exact).
* If the two sources ever disagree (they cannot, short of a bug or an engine that rewrites output, such
  as invalid UTF-8 cut by a 16 KiB record), the live stream is dropped and the history goes on alone.

Pure text in, text out (no I/O): ``logs`` feeds it and turns the text into log items.
"""

from __future__ import annotations

from typing import List, Optional

_LIMIT = 8 << 20
"""Characters of live text kept unconfirmed by the history before the live stream is given up."""
_RECENT = 1 << 20
"""Characters of history kept to find the seam in, should the history deliver it before the live stream."""


class Seam:
    """One stream's merge of history records and live text; every method returns the text to emit next.

    ``matching``: look for the seam in each history record as it comes (a live stream re-opened during a
    follow). The first live stream of a follow passes False and calls :meth:`history_done` once the
    history from before the attach has been read, which both looks for the seam and allows showing the
    seam line's frames early.
    """

    def __init__(self, matching: bool = False) -> None:
        self.synced = False
        self.dead = False
        self.live_closed = False
        self._matching = matching
        self._can_show = False
        # synced: text one source delivered beyond the other; `_lead_live` says which
        self._lead = ""
        self._lead_live = False
        # before the seam: the live text so far, where its first "\r" and "\n" end, what was shown
        self._live = ""
        self._h: Optional[int] = None
        self._n: Optional[int] = None
        self._shown_to = 0
        self._held: List[str] = []
        self._recent: List[str] = []
        self._recent_chars = 0

    @property
    def settled(self) -> bool:
        """True when no emitted live text waits for the history: the seam can be replaced by a new one."""
        if self.dead:
            return True
        if self.synced:
            return not (self._lead and self._lead_live)
        return self._shown_to == 0 and not self._held

    # -- live text -----------------------------------------------------------------------------------------
    def on_live(self, text: str) -> str:
        if self.dead or self.live_closed or not text:
            return ""
        if self.synced:
            return self._live_synced(text)
        self._live += text
        if len(self._live) > _LIMIT:
            return self.live_ended()
        out = ""
        if self._n is None:
            start = len(self._live) - len(text)
            nl = self._live.find("\n", start)
            cr = self._live.find("\r", start, nl if nl >= 0 else len(self._live))
            if self._h is None and cr >= 0:
                self._h = cr + 1
            if nl >= 0:
                self._n = nl + 1
                if self._matching:
                    out += self._sync_recent(prefer_last=True)
                    out += self._resolve()
        elif self._held and "\n" in text:
            out += self._resolve()  # a candidate seam waited for a live line after the seam line
        return out

    def live_ended(self) -> str:
        """The live stream ended (the container exited, the connection broke, or it fell too far behind)."""
        self.live_closed = True
        if self.synced:
            if not self._lead_live:
                self._lead = ""
            return ""
        return self._resolve()

    def history_done(self) -> str:
        """The history from before the attach has been read: look for the seam, show the frames."""
        self._matching = self._can_show = True
        if not self.synced and self._n is not None:
            return self._sync_recent()
        return ""

    # -- history records -------------------------------------------------------------------------------------
    def on_history(self, records: List[str]) -> str:
        if self.synced or self.dead:
            return self._history_synced("".join(records))
        if not self._matching:
            return "".join([self._emit_history(record) for record in records])
        self._held.extend(records)  # the whole batch: a candidate is judged with the records read after it
        return self._resolve()

    def finish(self) -> str:
        """Everything has been read: whatever is still held comes out."""
        out = self._resolve(final=True) if not self.synced else ""
        held, self._held = self._held, []
        return out + "".join(held)

    @property
    def showable(self) -> bool:
        """True if :meth:`show` has text: live frames of a seam line that is still open."""
        return (
            not self.synced
            and not self.live_closed
            and self._can_show
            and self._h is not None
            and self._n is None
            and len(self._live) > max(self._h, self._shown_to)
        )

    def show(self) -> str:
        """The seam line's live text after its first ``\\r`` not shown yet; the caller asks once the live
        stream has been quiet a moment (a line that ends at once is joined exactly instead) and makes it
        an item at once, so that the line's first frame, which comes later, stays an item of its own."""
        if not self.showable:
            return ""
        start = max(self._h or 0, self._shown_to)
        self._shown_to = len(self._live)
        return self._live[start:]

    # -- internals -------------------------------------------------------------------------------------------------
    def _emit_history(self, record: str) -> str:
        self._recent.append(record)
        self._recent_chars += len(record)
        while self._recent_chars > _RECENT and len(self._recent) > 1:
            self._recent_chars -= len(self._recent.pop(0))
        return record

    def _resolve(self, final: bool = False) -> str:
        """Processes held history records in order: the seam, records from before it, or wait."""
        out: List[str] = []
        while self._held and not self.synced:
            record = self._held[0]
            at = self._seam_at(record, final)
            if at is not None and self._n is not None:
                confirmed = self._confirmed_by_what_follows(final)
                if confirmed is None:
                    break  # the records after it, or the live lines after the seam line, will tell: wait
                if not confirmed:
                    at = None  # it only ends like the seam line ("16225" ends like the live "6225")
            if at is not None:
                self._held.pop(0)
                out.append(self._sync(record, at))
                break
            if at is None and self._n is None and not (final or self.live_closed) and self._shown_to > 0:
                if self._live[self._h or 0 : self._shown_to] in record:
                    break  # maybe the seam, ahead of the live stream: wait for the live line end
            self._held.pop(0)
            out.append(self._emit_history(record))
        if self.synced and self._held:
            held, self._held = self._held, []
            out.append(self._history_synced("".join(held)))
        return "".join(out)

    def _confirmed_by_what_follows(self, final: bool = False) -> Optional[bool]:
        """Whether the held records after the candidate seam agree with the live lines after the seam line:
        False if they differ, True once they cover every complete live line, None while too few have come.
        (A record that merely ends like the seam line is told apart by the lines that follow it.)

        While the history has not reached the end of the live lines, the records to come decide, even once
        the live stream has closed: the history is complete (a candidate that stood last in its batch, taken
        because the live stream had closed, once let 6,000 lines of ``seq`` be skipped). While the live
        stream is open and the history is ahead of it, the next live line decides. At the end of the
        history a candidate not confirmed is not the seam."""
        after_live = self._live[self._n or 0 :]
        after_live = after_live[: after_live.rfind("\n") + 1]  # an unended live line is not in the history yet
        after_hist = "".join(self._held[1:])
        common = min(len(after_hist), len(after_live))
        if after_hist[:common] != after_live[:common]:
            return False
        if len(after_hist) < len(after_live):
            return False if final else None
        if after_hist and not after_live and not (self.live_closed or final):
            return None
        return True

    def _seam_at(self, record: str, final: bool) -> Optional[int]:
        """Where the live text starts in ``record`` if ``record`` is the seam, else None."""
        if self._n is not None:
            line = self._live[: self._n]
            return len(record) - len(line) if record.endswith(line) else None
        if (final or self.live_closed) and self._live:
            at = record.find(self._live)
            return at if at >= 0 else None
        return None

    def _sync(self, record: str, at: int) -> str:
        """``record`` is the seam and the live text starts at ``at`` in it: emit what was not shown yet."""
        self.synced = True
        live, self._live = self._live, ""
        self._recent, self._recent_chars = [], 0
        if self._shown_to:
            # the line's start up to the first live "\r" (what the engine held from before the attach) is
            # frames that the ones shown already overwrote: coming now, after them, it would leave the line
            # showing a stale frame, so a follow skips it (a snapshot has it)
            piece = record[at + self._shown_to :]
        else:
            piece = record
        covered = len(record) - at
        if covered < len(live):
            tail = live[covered:]
            self._lead, self._lead_live = tail, True
            return piece + tail
        self._lead, self._lead_live = "", False
        return piece

    def _sync_recent(self, prefer_last: bool = False) -> str:
        """The seam may have been emitted already (read before the live stream's line end came).

        Identical lines can make several records fit; then the live text that came before the history was
        read is taken to be in it (the first fit), and a line end that came after it, not (the last fit)."""
        assert self._n is not None
        line = self._live[: self._n]
        after_live = self._live[self._n :]
        order = range(len(self._recent) - 1, -1, -1) if prefer_last else range(len(self._recent))
        for j in order:
            record = self._recent[j]
            if not record.endswith(line):
                continue
            after_hist = "".join(self._recent[j + 1 :])
            common = min(len(after_hist), len(after_live))
            if after_hist[:common] != after_live[:common]:
                continue
            self.synced = True
            self._live, self._recent, self._recent_chars = "", [], 0
            if self._shown_to:  # shown text is in this record too: cannot happen (such records are held)
                self.dead = True
                return ""
            if len(after_live) > len(after_hist):
                tail = after_live[len(after_hist) :]
                self._lead, self._lead_live = tail, True
                return tail
            self._lead, self._lead_live = after_hist[len(after_live) :], False
            return ""
        return ""

    def _live_synced(self, text: str) -> str:
        if self._lead and not self._lead_live:
            k = min(len(self._lead), len(text))
            if self._lead[:k] != text[:k]:
                self.dead = True
                self._lead = ""
                return ""
            self._lead, text = self._lead[k:], text[k:]
            if not text:
                return ""
        self._lead += text
        self._lead_live = True
        if len(self._lead) > _LIMIT:
            self.dead = True  # the history stopped confirming: keep the obligation, drop the live stream
        return text

    def _history_synced(self, text: str) -> str:
        if not text:
            return ""
        if self._lead and self._lead_live:
            k = min(len(self._lead), len(text))
            if self._lead[:k] != text[:k]:
                self.dead = True
                self._lead = ""
                return text
            self._lead, text = self._lead[k:], text[k:]
            if not text:
                return ""
        if self.dead or self.live_closed:
            self._lead = ""
            return text
        self._lead += text
        self._lead_live = False
        if len(self._lead) > _LIMIT:
            self.dead = True
            self._lead = ""
        return text
