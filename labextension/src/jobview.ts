/**
 * A job's live view, fed by the server (no kernel involved): its state, each replica's state, exit
 * code, host, times and usage, its metrics charted (the main-area view only: see metricsview.ts), and one
 * replica's log followed live. The main-area view a sidebar row
 * opens, and (compact) what a job's cell output shows when its widget is gone.
 */
import { Widget } from '@lumino/widgets';

import { ApiError, followLog, getJob, IJobDetail, ILogEvent, replicaRunning } from './api';
import { askToCancel } from './cancel';
import { bytes, clock, el, elapsed, exitText, pill, setText, visible } from './format';
import { MetricsSection } from './metricsview';
import { fillTracker, trackerHTML, trackerText } from './trackerview';

const MAX_LINES = 2000;
const COMPACT_LINES = 40;
const RECORD_LINES = 40;
const REFRESH_MS = 1000;

export interface IJobViewOptions {
  /** A smaller view, for a cell's output. */
  compact?: boolean;
  /** A line shown above the view (why a cell shows this instead of its pane). */
  note?: string;
  /** The same, said in the static record (see `record()`). */
  recordNote?: string;
  /** Shows a button that opens the job in its own view (`frontEnd.openLabel`). */
  open?: (handle: string) => void;
  /** Called once if the server does not know the job (404) or cannot be reached. */
  missing?: (error: ApiError) => void;
  /** Called once when the job is seen ended (with its final detail). */
  ended?: (detail: IJobDetail) => void;
  /** Called once when the job has ended and its log has been read to the end (or could not be). */
  settled?: (view: JobView) => void;
}

const SETTLE_GRACE_MS = 5000;

/** What the views say about the front end they run in (set by the plugins from the app). */
export const frontEnd = {
  /** Who writes a job's final record into a notebook: the app's name ("JupyterLab", "Jupyter Notebook"). */
  name: 'JupyterLab',
  /** The button that opens a job in its own view: JupyterLab's main area, Notebook 7's panel below the page. */
  openLabel: 'Open in main area',
  /** Where the user finds "Trust Notebook": JupyterLab 4 has it in the command palette only. */
  trustWhere: 'Trust Notebook in the command palette'
};

/** `text` for HTML, its control and bidirectional characters shown escaped (`visible`). */
export function escapeHTML(text: string): string {
  return visible(text, '\n\t').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export class JobView extends Widget {
  readonly handle: string;
  detail: IJobDetail | null = null;

  constructor(handle: string, options: IJobViewOptions = {}) {
    super();
    this.handle = handle;
    this.options = options;
    this.addClass('jsl-job-view');
    if (options.compact) {
      this.addClass('jsl-compact');
    }
    this.node.dataset.handle = handle;
    if (options.note) {
      this.node.appendChild(el('div', 'jsl-note', options.note));
    }
    this.metrics = options.compact ? null : new MetricsSection(handle);
    this.node.append(this.head, this.message, this.table);
    if (this.metrics) {
      this.node.appendChild(this.metrics.node);
    }
    this.node.append(this.tracker, this.logbar, this.log, this.logFoot);
    this.message.hidden = true;
    this.tracker.hidden = true;
    void this.refresh();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.stopped = true;
    window.clearTimeout(this.timer);
    window.clearTimeout(this.settleTimer);
    this.stopLog?.();
    this.metrics?.dispose();
    super.dispose();
  }

  /** Asks the server again now (and every second while the job runs). */
  async refresh(): Promise<void> {
    window.clearTimeout(this.timer);
    try {
      const detail = await getJob(this.handle);
      if (this.stopped) {
        return;
      }
      this.failures = 0;
      const wasRunning = this.detail === null || this.detail.running;
      this.detail = detail;
      this.render(detail);
      this.metrics?.poll(detail.running);
      if (detail.running) {
        this.timer = window.setTimeout(() => void this.refresh(), REFRESH_MS);
      } else if (wasRunning) {
        this.options.ended?.(detail);
        this.settleTimer = window.setTimeout(() => this.settle(), SETTLE_GRACE_MS);
        this.maybeSettle();
      }
    } catch (error) {
      if (this.stopped) {
        return;
      }
      const err = error instanceof ApiError ? error : new ApiError(0, String(error));
      if (this.options.missing && !this.detail) {
        this.options.missing(err);
        return;
      }
      this.showMessage(err.status === 404 ? `The Jupyter server does not know ${this.handle}.` : err.message);
      if (err.status !== 404 && err.status !== 400) {
        // a backend that is down (503) says when to ask again; other failures back off, up to a minute
        this.failures += 1;
        const backoff = Math.min(60000, 3 * REFRESH_MS * 2 ** (this.failures - 1));
        const wait = err.retryAfter !== null ? err.retryAfter * 1000 : backoff;
        this.timer = window.setTimeout(() => void this.refresh(), wait);
      }
    }
  }

  private showMessage(text: string): void {
    setText(this.message, text);
    this.message.hidden = false;
  }

  private render(detail: IJobDetail): void {
    this.message.hidden = true;
    const running = detail.running;
    const now = Date.now() / 1000;
    this.title.label = visible(`${detail.name} (${detail.state})`);
    this.head.replaceChildren();
    const line = el('div', 'jsl-head-line');
    line.append(pill(detail.state), el('span', 'jsl-name', detail.name), el('code', 'jsl-handle', detail.handle));
    this.head.appendChild(line);
    const facts = el('div', 'jsl-facts');
    facts.textContent = visible([
      detail.scheduler,
      `session ${detail.session}`,
      `started ${clock(detail.started)}`,
      elapsed(detail.started, detail.ended, running, now),
      detail.notebook ? `from ${detail.notebook}` : ''
    ]
      .filter(Boolean)
      .join(' · '));
    this.head.appendChild(facts);
    if (detail.reason && detail.state === 'FAILED') {
      this.head.appendChild(el('div', 'jsl-reason', detail.reason));
    }
    if (detail.status.msg) {
      this.head.appendChild(el('div', 'jsl-msg', detail.status.msg));
    }
    const buttons = el('div', 'jsl-buttons');
    if (running) {
      const cancel = el('button', 'jp-Button jp-mod-styled jp-mod-warn jsl-cancel', 'Cancel');
      cancel.onclick = () => void this.cancel(cancel);
      buttons.appendChild(cancel);
    }
    if (this.options.open) {
      const open = el('button', 'jp-Button jp-mod-styled jsl-open', frontEnd.openLabel);
      open.onclick = () => this.options.open?.(this.handle);
      buttons.appendChild(open);
    }
    if (buttons.childElementCount) {
      this.head.appendChild(buttons);
    }
    this.renderTable(detail, now);
    this.renderReplicaTabs(detail);
    const tracker = JSON.stringify(detail.tracker ?? []);
    if (tracker !== this.trackerShown) {
      // rebuilt only when the server's block changed: it is read again only when the job's files did
      this.trackerShown = tracker;
      fillTracker(this.tracker, detail.tracker ?? [], detail.handle);
    }
  }

  private renderTable(detail: IJobDetail, now: number): void {
    const usage = new Map(detail.usage.map(u => [`${u.role}/${u.replica}`, u]));
    this.table.replaceChildren();
    const head = el('tr');
    for (const h of ['replica', 'state', 'exit', 'host / pid', 'started', 'time', 'cpu', 'memory']) {
      head.appendChild(el('th', '', h));
    }
    this.table.appendChild(head);
    for (const role of detail.status.roles) {
      for (const rep of role.replicas) {
        const u = usage.get(`${role.role}/${rep.id}`);
        const row = el('tr');
        row.dataset.replica = `${role.role}/${rep.id}`;
        const state = el('td');
        state.appendChild(pill(rep.state));
        const mem = u
          ? u.running
            ? `${bytes(u.rss_bytes)} (peak ${bytes(u.peak_rss_bytes)}${u.mem_limit_bytes ? ` of ${bytes(u.mem_limit_bytes)}` : ''})`
            : `peak ${bytes(u.peak_rss_bytes)}`
          : '-';
        row.append(
          el('td', '', `${role.role}/${rep.id}`),
          state,
          el('td', '', exitText(rep.exit_code, '-')),
          el('td', '', [rep.hostname, rep.pid].filter(v => v !== null && v !== '').join(' / ') || '-'),
          el('td', '', clock(rep.started)),
          el('td', '', elapsed(rep.started, rep.finished, replicaRunning(rep.state), now)),
          el('td', '', u ? (u.running ? `${u.cpu_percent.toFixed(0)}%` : `${u.cpu_seconds.toFixed(1)}s`) : '-'),
          el('td', '', mem)
        );
        this.table.appendChild(row);
        if (rep.msg) {
          const msg = el('tr', 'jsl-replica-msg');
          const cell = el('td', '', rep.msg);
          cell.colSpan = 8;
          msg.appendChild(cell);
          this.table.appendChild(msg);
        }
      }
    }
  }

  private renderReplicaTabs(detail: IJobDetail): void {
    const replicas = detail.status.roles.flatMap(r => r.replicas.map(rep => ({ role: r.role, rep })));
    const keys = replicas.map(({ role, rep }) => `${role}/${rep.id}`);
    if (keys.join() !== this.tabKeys) {
      this.tabKeys = keys.join();
      this.logbar.replaceChildren(el('span', 'jsl-logbar-label', 'logs'));
      for (const key of keys) {
        const tab = el('button', 'jsl-tab', key);
        tab.dataset.replica = key;
        tab.onclick = () => this.follow(key);
        this.logbar.appendChild(tab);
      }
    }
    if (!this.following && keys.length) {
      const failed = replicas.find(({ rep }) => rep.state === 'FAILED');
      this.follow(failed ? `${failed.role}/${failed.rep.id}` : keys[0]);
    }
    if (!keys.length) {
      this.logFoot.textContent = detail.running ? 'waiting for the job to start…' : 'no replicas';
    }
  }

  /** Follows replica `key` (`role/k`)'s log from the server. */
  follow(key: string): void {
    if (this.following === key) {
      return;
    }
    this.stopLog?.();
    this.following = key;
    for (const tab of Array.from(this.logbar.querySelectorAll<HTMLElement>('.jsl-tab'))) {
      tab.classList.toggle('jsl-tab-active', tab.dataset.replica === key);
    }
    this.lines = [];
    this.current = '';
    this.total = 0;
    this.drawLog('following…');
    const slash = key.lastIndexOf('/');
    const role = key.slice(0, slash);
    const k = Number(key.slice(slash + 1));
    this.stopLog = followLog(
      this.handle,
      role,
      k,
      event => this.onLog(event),
      error => {
        if (error) {
          this.drawLog(`cannot follow the log: ${error.message}`);
        }
      }
    );
  }

  private onLog(event: ILogEvent): void {
    if (event.reset) {
      this.lines = event.html.slice();
    } else {
      this.lines.push(...event.html);
    }
    const cap = this.options.compact ? COMPACT_LINES : MAX_LINES;
    if (this.lines.length > cap) {
      this.lines.splice(0, this.lines.length - cap);
    }
    this.current = event.current;
    this.total = event.total;
    this.logEnded = event.ended || !!event.error;
    const foot = event.error
      ? event.error
      : event.ended
        ? `end of log · ${lines(this.total)}`
        : `following · ${lines(this.total)}`;
    this.drawLog(foot);
    this.maybeSettle();
  }

  private maybeSettle(): void {
    const replicas = this.detail ? this.detail.status.roles.reduce((n, r) => n + r.replicas.length, 0) : 0;
    if (this.detail && !this.detail.running && (this.logEnded || replicas === 0)) {
      this.settle();
    }
  }

  private settle(): void {
    if (this.settled || this.stopped) {
      return;
    }
    this.settled = true;
    window.clearTimeout(this.settleTimer);
    this.options.settled?.(this);
  }

  /**
   * What the view shows, as a static record a notebook can keep: escaped HTML with inline styles only
   * (the log lines as the server escaped them), and plain text.
   */
  record(): { html: string; text: string } | null {
    if (!this.detail) {
      return null;
    }
    const lines = this.lines.slice(-RECORD_LINES);
    return recordOf(this.detail, { lines, total: this.total, replica: this.following }, this.options.recordNote || '');
  }

  private drawLog(foot: string): void {
    const stick = this.log.scrollTop + this.log.clientHeight >= this.log.scrollHeight - 4;
    const shown = this.lines.length + (this.current ? 1 : 0);
    const hidden = Math.max(0, this.total - this.lines.length);
    const lines = this.current ? [...this.lines, this.current] : this.lines;
    // server-escaped HTML (see format.ts): log text never reaches the DOM unescaped
    this.log.innerHTML = lines.join('\n');
    this.log.hidden = shown === 0;
    setText(this.logFoot, (hidden ? `${hidden.toLocaleString()} earlier lines not shown · ` : '') + foot);
    if (stick) {
      this.log.scrollTop = this.log.scrollHeight;
    }
  }

  private async cancel(button: HTMLButtonElement): Promise<void> {
    const outcome = await askToCancel(this.detail?.name ?? '', this.handle, button);
    if (outcome.kind === 'kept') {
      return;
    }
    if (outcome.kind === 'failed') {
      this.showMessage(`could not cancel: ${outcome.message}`);
    }
    void this.refresh();
  }

  private options: IJobViewOptions;
  private metrics: MetricsSection | null;
  private stopped = false;
  private timer = 0;
  private failures = 0;
  private head = el('div', 'jsl-head');
  private message = el('div', 'jsl-message');
  private table = el('table', 'jsl-replicas');
  private tracker = el('div', 'jsl-tracker');
  private trackerShown = '';
  private logbar = el('div', 'jsl-logbar');
  private log = el('pre', 'jsl-log');
  private logFoot = el('div', 'jsl-log-foot');
  private tabKeys = '';
  private following = '';
  private stopLog: (() => void) | null = null;
  private lines: string[] = [];
  private current = '';
  private total = 0;
  private logEnded = false;
  private settled = false;
  private settleTimer = 0;
}

/** A replica's log tail as the server sent it (escaped HTML lines). */
export interface ILogTail {
  lines: string[];
  total: number;
  replica: string;
}

/** ``1 line``, ``2,000 lines``. */
function lines(n: number): string {
  return `${n.toLocaleString()} ${n === 1 ? 'line' : 'lines'}`;
}

// The kernel's record styles (jupyter_sched/notebook/panes/theme.py), so a record JupyterLab writes looks like one
// the kernel writes: inline styles only (nbconvert and GitHub drop style sheets), colours that read in both
// themes, and the classes MathJax skips (a `$` in a log line stays text).
export const NO_MATH = 'tex2jax_ignore mathjax_ignore';
export const PANE_STYLE =
  'font-family:var(--jp-ui-font-family, system-ui, sans-serif);font-size:13px;line-height:1.45;' +
  'color:var(--jp-content-font-color1, inherit)';
const MONO = "font-family:var(--jp-code-font-family, Menlo, 'DejaVu Sans Mono', consolas, monospace)";
export const TABLE_STYLE = 'border-collapse:collapse;font-size:12px;line-height:1.45;margin:2px 0;table-layout:auto';
export const CELL_STYLE = 'padding:1px 8px;text-align:left;vertical-align:top;line-height:1.45;border:none';
export const ROW_STYLE = 'border-bottom:1px solid rgba(128,128,128,0.25);background:none';
export const CODE_STYLE = 'background:rgba(128,128,128,0.12);border-radius:3px;padding:0 4px;font-size:12px';
export const NOTE_STYLE = 'font-size:11px;opacity:0.7;margin:4px 0 2px';
const BOX_STYLE = 'margin-top:2px;border:1px solid rgba(128,128,128,0.3);border-radius:3px';
const PRE_STYLE =
  `margin:0;padding:2px 4px;white-space:pre-wrap;${MONO};font-size:12px;line-height:1.35;` +
  'background:none;border:none;color:inherit';
const STATE_COLORS: { [state: string]: string } = {
  RUNNING: '#208ffb',
  SUCCEEDED: '#00a250',
  FAILED: '#e75c58',
  CANCELLED: '#ddb62b'
};

export function pillHTML(state: string): string {
  const color = STATE_COLORS[state] || '#808080';
  const italic = state === 'UNKNOWN' ? ';font-style:italic' : '';
  return (
    '<span class="jsched-pill" style="display:inline-block;padding:0 7px;border-radius:8px;' +
    `border:1px solid ${color};background:${color}22;color:${color};font-weight:600;font-size:11px;` +
    `line-height:16px${italic}">${escapeHTML(state)}</span>`
  );
}

/**
 * A job as a static record a notebook can keep, laid out as the kernel's record (name, app id, backend,
 * state pill and time; why it failed; one row per replica; how to get back to it; the log tail): escaped
 * HTML with inline styles only (the log lines as the server escaped them), and plain text.
 */
export function recordOf(detail: IJobDetail, log: ILogTail, note: string): { html: string; text: string } {
  const now = Date.now() / 1000;
  const when = elapsed(detail.started, detail.ended, detail.running, now);
  const rows = detail.status.roles.flatMap(role =>
    role.replicas.map(rep => {
      const values = [
        `${role.role}/${rep.id}`,
        rep.state,
        exitText(rep.exit_code),
        [rep.hostname, rep.pid].filter(v => v !== null && v !== '').join(' / '),
        elapsed(rep.started, rep.finished, replicaRunning(rep.state), now)
      ];
      const cells = values.map((v, i) => `<td style="${CELL_STYLE}">${i === 1 ? pillHTML(v) : escapeHTML(v)}</td>`);
      return { values, html: `<tr style="${ROW_STYLE}">${cells.join('')}</tr>` };
    })
  );
  const heads = ['replica', 'state', 'exit code', 'host / pid', 'time'];
  const failed = detail.state === 'FAILED' && detail.reason ? detail.reason : '';
  const appId = detail.app_id || detail.handle;
  const hint = `re-attach: %sched_status ${detail.handle} · logs: %sched_logs ${detail.handle}`;
  const shown =
    log.total > log.lines.length
      ? `last ${log.lines.length.toLocaleString()} of ${lines(log.total)}`
      : lines(log.lines.length);
  const html =
    `<div class="jsched-record jsched-job ${NO_MATH}" style="${PANE_STYLE}"><div>` +
    `<div style="font-size:13px"><b>${escapeHTML(detail.name)}</b> ` +
    `<code style="${CODE_STYLE}">${escapeHTML(appId)}</code> on ${escapeHTML(detail.scheduler)} ` +
    `${pillHTML(detail.state)} · ${escapeHTML(when)}</div>` +
    (failed
      ? `<div class="jsched-failure" style="color:${STATE_COLORS.FAILED};font-size:12px;font-weight:600">` +
        `${escapeHTML(failed)}</div>`
      : '') +
    `<table style="${TABLE_STYLE}"><thead><tr style="${ROW_STYLE}">` +
    heads.map(h => `<th style="${CELL_STYLE};font-weight:600">${h}</th>`).join('') +
    `</tr></thead><tbody>${rows.map(r => r.html).join('')}</tbody></table>` +
    trackerHTML(detail.tracker ?? [], detail.handle) +
    `<div class="jsched-hint" style="${NOTE_STYLE}">${escapeHTML(hint)}</div></div>` +
    (log.lines.length
      ? `<div class="jsched-log" style="margin-top:4px"><div style="font-size:12px"><b>logs</b> · ` +
        `${escapeHTML(log.replica)} · ${escapeHTML(shown)} · ended</div>` +
        `<div style="${BOX_STYLE}"><pre style="${PRE_STYLE}">${log.lines.join('\n')}</pre></div></div>`
      : '') +
    `<div style="${NOTE_STYLE}">${escapeHTML(note ? note + ' ' : '')}` +
    `The final state, recorded by ${escapeHTML(frontEnd.name)} from the Jupyter server.</div></div>`;
  const box = document.createElement('div');
  const plain = log.lines.map(line => {
    box.innerHTML = line; // server-escaped: markup is only inline-styled spans
    return '  ' + (box.textContent || '');
  });
  const text = [
    `${detail.name} ${appId} on ${detail.scheduler} ${detail.state} · ${when}`,
    ...(failed ? [failed] : []),
    ...rows.map(r => '  ' + r.values.join('  ')),
    ...trackerText(detail.tracker ?? [], detail.handle),
    ...(plain.length ? ['logs:', ...plain] : []),
    hint
  ]
    .map(line => visible(line, '\t'))
    .join('\n');
  return { html, text };
}
