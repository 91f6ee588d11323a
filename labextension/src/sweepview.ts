/**
 * A sweep's cell output when the kernel that drew its table is gone: the sweep as the Jupyter server knows
 * it, live while its runs run, then written into the notebook as its final record.
 *
 * The server groups a sweep's runs by their names (`GET jobs?sweep=<name>`: the sweep's row and one row per
 * run, from the one model in jupyter_sched/frontend/jobs), so everything said here about a run (its state,
 * times, why it ended, its metrics' last values) and about the sweep (its state, counts, its time) is what
 * the server derived: this file lays the rows out and derives nothing. What the server cannot know is what
 * lived only in the kernel: each run's parameters and returned values, and runs still queued there. The
 * record the kernel saved holds those, so it is kept under the server's table ("as saved").
 *
 * Everything the server sends that a job wrote (names, reasons, metric keys) reaches the page escaped
 * (`escapeHTML`), control and bidirectional characters shown as escapes.
 */
import { Widget } from '@lumino/widgets';

import { ApiError, IJobRow, ISweepRow, listJobs } from './api';
import { formatValue } from './charts';
import { clock, el, elapsed, setText, visible } from './format';
import {
  CELL_STYLE,
  CODE_STYLE,
  escapeHTML,
  frontEnd,
  NO_MATH,
  NOTE_STYLE,
  PANE_STYLE,
  pillHTML,
  ROW_STYLE,
  TABLE_STYLE
} from './jobview';

const REFRESH_MS = 2000;
/** Runs asked for at once (the server's most per page); a larger sweep's table says how many more. */
const RUNS_LIMIT = 500;
/** Metric columns at most (the kernel's table shows as many). */
const METRIC_COLUMNS = 6;
/**
 * A sweep the server sees ended with fewer runs than the output was saved with: its other runs were queued
 * in a kernel. If that kernel still runs somewhere (another page), it launches the next one within a moment;
 * only after this long is the sweep taken as ended.
 */
const SHORT_GRACE_MS = 10000;

/** What the kernel saved in a sweep's output (`application/vnd.jupyter-sched.sweep+json`). */
export interface ISweepInfo {
  sweep: string;
  label: string;
  state: string;
  final: boolean;
  as_of: number | null;
  /** How many runs the sweep had in the kernel (queued ones too). */
  runs: number;
}

export interface ISweepViewOptions {
  info: ISweepInfo;
  /** A line above the view: why the output shows this instead of the table. */
  note: string;
  /** The same, said in the record. */
  recordNote: string;
  /** Opens a run's job view. */
  open: (handle: string) => void;
  /** Called once if the server knows no run of the sweep, or cannot be asked before it showed any. */
  missing: (why: string) => void;
  /** Called once when the server sees the sweep ended (its final rows in the view). */
  settled: (view: SweepServerView) => void;
}

export class SweepServerView extends Widget {
  sweep: ISweepRow | null = null;
  runs: IJobRow[] = [];

  constructor(private readonly options: ISweepViewOptions) {
    super();
    this.addClass('jsl-sweep-view');
    this.node.dataset.sweep = options.info.sweep;
    this.node.append(el('div', 'jsl-note', options.note), this.message, this.body);
    this.message.hidden = true;
    void this.refresh();
  }

  dispose(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
    super.dispose();
  }

  /** The view as a record a notebook keeps (see `sweepRecordOf`). */
  record(saved: { html: string; text: string }): { html: string; text: string } | null {
    if (!this.sweep) {
      return null;
    }
    return sweepRecordOf(this.sweep, this.runs, this.options.info, this.options.recordNote, saved);
  }

  private async refresh(): Promise<void> {
    const name = this.options.info.sweep;
    try {
      const page = await listJobs({ sweep: name, limit: String(RUNS_LIMIT) });
      if (this.stopped) {
        return;
      }
      if (!page.sweep) {
        // the server answers from its last listing while it makes the next: only a listing made after the
        // first answer (and so after this view asked) that lists no run says the server does not know them
        if (this.sweep || (this.firstListing !== null && page.generated > this.firstListing)) {
          this.options.missing(`the Jupyter server knows no run of sweep ${name}`);
          return;
        }
        this.firstListing = this.firstListing ?? page.generated;
        setText(this.message, `asking the Jupyter server about sweep ${name}…`);
        this.message.hidden = false;
        this.timer = window.setTimeout(() => void this.refresh(), REFRESH_MS / 2);
        return;
      }
      this.failures = 0;
      this.message.hidden = true;
      this.sweep = page.sweep;
      this.runs = page.jobs.filter((row): row is IJobRow => row.kind === 'job');
      this.render();
      if (this.sweep.running) {
        this.endedSince = 0;
      } else if (this.sweep.total >= this.options.info.runs) {
        this.options.settled(this);
        return;
      } else {
        this.endedSince = this.endedSince || Date.now();
        if (Date.now() - this.endedSince >= SHORT_GRACE_MS) {
          this.options.settled(this);
          return;
        }
      }
      this.timer = window.setTimeout(() => void this.refresh(), REFRESH_MS);
    } catch (error) {
      if (this.stopped) {
        return;
      }
      const err = error instanceof ApiError ? error : new ApiError(0, String(error));
      if (!this.sweep) {
        this.options.missing(err.message);
        return;
      }
      setText(this.message, err.message);
      this.message.hidden = false;
      // a backend that is down (503) says when to ask again; other failures back off, up to a minute
      this.failures += 1;
      const backoff = Math.min(60000, REFRESH_MS * 2 ** this.failures);
      this.timer = window.setTimeout(() => void this.refresh(), err.retryAfter !== null ? err.retryAfter * 1000 : backoff);
    }
  }

  private render(): void {
    if (!this.sweep) {
      return;
    }
    const html = sweepHTML(this.sweep, this.runs, this.options.info, Date.now() / 1000);
    if (html === this.shown) {
      return;
    }
    this.shown = html;
    this.body.innerHTML = html; // every text in it escaped by sweepHTML
    for (const row of Array.from(this.body.querySelectorAll<HTMLElement>('tr[data-handle]'))) {
      const handle = row.dataset.handle || '';
      row.title = visible(`open ${handle}`);
      row.onclick = () => this.options.open(handle);
    }
  }

  private stopped = false;
  private timer = 0;
  private failures = 0;
  private endedSince = 0;
  private firstListing: number | null = null;
  private shown = '';
  private message = el('div', 'jsl-message');
  private body = el('div', 'jsl-sweep-body');
}

/** The runs in their grid order (`run 000`, `run 001`, ... `run 1000`: the server's labels, compared as numbers). */
function inGridOrder(runs: IJobRow[]): IJobRow[] {
  return runs.slice().sort((a, b) => a.label.localeCompare(b.label, undefined, { numeric: true }));
}

/** The metric keys the runs' rows carry, in the rows' own order (keys with a goal first), at most six. */
function metricKeys(runs: IJobRow[]): string[] {
  const keys: string[] = [];
  for (const run of runs) {
    for (const metric of run.metrics || []) {
      if (!keys.includes(metric.key) && keys.length < METRIC_COLUMNS) {
        keys.push(metric.key);
      }
    }
  }
  return keys;
}

/** Why a run ended, without its name in front (the row's `reason` is "<name> FAILED: ..."). */
function why(run: IJobRow): string {
  return !run.running && run.state !== 'SUCCEEDED' && run.reason ? run.reason.slice(run.name.length + 1) : '';
}

function countsText(sweep: ISweepRow): string {
  return Object.entries(sweep.counts)
    .sort((a, b) => b[1] - a[1])
    .map(([state, n]) => `${n} ${state.toLowerCase()}`)
    .join(' · ');
}

function cells(run: IJobRow, keys: string[], now: number): string[] {
  const last = new Map((run.metrics || []).map(m => [m.key, m.last]));
  return [
    run.label,
    run.state,
    elapsed(run.started, run.ended, run.running, now),
    ...keys.map(k => (last.has(k) ? formatValue(last.get(k), 4) : '')),
    why(run)
  ];
}

function unknownRuns(sweep: ISweepRow, info: ISweepInfo): string {
  return sweep.total < info.runs
    ? `The Jupyter server knows ${sweep.total} of the sweep's ${info.runs} runs: the others were queued in the ` +
        'kernel that drew its table, and start only while that kernel runs.'
    : '';
}

/** The sweep's heading and its runs' table, as escaped HTML with inline styles (a record's look). */
export function sweepHTML(sweep: ISweepRow, runs: IJobRow[], info: ISweepInfo, now: number): string {
  const keys = metricKeys(runs);
  const heads = ['run', 'state', 'time', ...keys, 'why it ended'];
  const rows = inGridOrder(runs).map(run => {
    const values = cells(run, keys, now);
    const tds = values.map((v, i) => `<td style="${CELL_STYLE}">${i === 1 ? pillHTML(v) : escapeHTML(v)}</td>`);
    return `<tr data-handle="${escapeHTML(run.handle)}" style="${ROW_STYLE}">${tds.join('')}</tr>`;
  });
  const more = sweep.total - runs.length;
  const unknown = unknownRuns(sweep, info);
  const when = elapsed(sweep.started, sweep.ended, sweep.running, now);
  return (
    `<div class="jsched-record jsched-sweep ${NO_MATH}" style="${PANE_STYLE}">` +
    `<div style="font-size:13px"><b>sweep ${escapeHTML(sweep.label)}</b> ` +
    `<code style="${CODE_STYLE}">${escapeHTML(sweep.sweep)}</code> on ${escapeHTML(sweep.scheduler)} ` +
    `${pillHTML(sweep.state)} · ${escapeHTML([countsText(sweep), when].join(' · '))}</div>` +
    (unknown ? `<div class="jsched-unknown-runs" style="${NOTE_STYLE}">${escapeHTML(unknown)}</div>` : '') +
    `<table style="${TABLE_STYLE}"><thead><tr style="${ROW_STYLE}">` +
    heads.map(h => `<th style="${CELL_STYLE};font-weight:600">${escapeHTML(h)}</th>`).join('') +
    `</tr></thead><tbody>${rows.join('')}</tbody></table>` +
    (more > 0 ? `<div style="${NOTE_STYLE}">and ${more} more runs (the Jobs sidebar lists them all)</div>` : '') +
    '</div>'
  );
}

/**
 * A sweep as a static record a notebook can keep: the server's table (final), a line saying who wrote it and
 * why, and the table the kernel saved (its parameters and results, as of when it was saved) below.
 */
export function sweepRecordOf(
  sweep: ISweepRow,
  runs: IJobRow[],
  info: ISweepInfo,
  note: string,
  saved: { html: string; text: string }
): { html: string; text: string } {
  const now = Date.now() / 1000;
  const savedWhen = info.as_of ? ` as of ${clock(info.as_of)}` : '';
  const line =
    `${note ? note + ' ' : ''}The final state of the sweep's runs, recorded by ${frontEnd.name} from the Jupyter ` +
    `server. Below: the table as its kernel saved it${savedWhen}, with each run's parameters and results.`;
  const html =
    `<div class="jsched-record jsched-sweep-final ${NO_MATH}" style="${PANE_STYLE}">` +
    sweepHTML(sweep, runs, info, now) +
    `<div style="${NOTE_STYLE}">${escapeHTML(line)}</div>` +
    (saved.html ? `<div class="jsched-saved" style="margin-top:4px;opacity:0.8">${saved.html}</div>` : '') +
    '</div>';
  const keys = metricKeys(runs);
  const unknown = unknownRuns(sweep, info);
  const text = [
    `sweep ${sweep.label} (${sweep.sweep}) on ${sweep.scheduler} ${sweep.state} · ` +
      [countsText(sweep), elapsed(sweep.started, sweep.ended, sweep.running, now)].join(' · '),
    ...(unknown ? [unknown] : []),
    '  ' + ['run', 'state', 'time', ...keys, 'why it ended'].join('  '),
    ...inGridOrder(runs).map(run => '  ' + cells(run, keys, now).join('  ')),
    line,
    ...(saved.text ? ['as saved:', ...saved.text.split('\n').map(l => '  ' + l)] : [])
  ]
    .map(l => visible(l, '\t'))
    .join('\n');
  return { html, text };
}
