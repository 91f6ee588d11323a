/**
 * The Jobs sidebar: every job of the user, running ones on top, then newest first; a sweep is one
 * collapsible row with its counts; filters (this notebook, session, backend, state); each row shows its
 * state, elapsed time and usage, and a Cancel button (with a confirm) while it runs. Clicking a row
 * opens the job's live view. Every row element carries `data-handle`.
 *
 * Rows are kept by handle and updated in place (a button under the pointer is never replaced), so a
 * poll every second costs a few text changes. The list is paged by the server: 50 entries, then
 * "Show more".
 *
 * A row whose job logs metrics (`jupyter_sched.track`) shows, on a line of its own, a sparkline of its main
 * metric (the first of the row's `metrics`: a key with a goal first), its last value (four significant
 * digits) and its key, with a tooltip naming the key, its last value, step and best. The row
 * brings only last values; the line's points come from `GET jobs/<h>/metrics?keys=<main>&max_points=50`,
 * asked only for a row on screen, only when its last value or step changed since the last answer, never
 * twice at once, and from the previous answer's cursor, so each request reads only the records written
 * since (the new points are appended and the line cut to 50 points again, keeping each bucket's min and
 * max). A list of 50 finished jobs asks nothing; a running job on screen, at most once per refresh.
 */
import { Widget } from '@lumino/widgets';

import { getMetrics, IJobList, IJobRow, ISweepRow } from './api';
import { askToCancel } from './cancel';
import { downsample, formatValue, sparkline } from './charts';
import { el, elapsed, pill, setText, usageText, visible } from './format';
import type { IMetricPoint } from './model';

export const PAGE = 50;
/** Points of a sidebar sparkline (what it asks the server for, and what it keeps). */
export const SPARK_POINTS = 50;

export interface IFilters {
  notebook: boolean;
  session: string;
  scheduler: string;
  state: string;
}

export interface ISidebarOptions {
  open: (handle: string) => void;
  /** The path of the notebook the "This notebook" filter means (the last one focused). */
  currentNotebook: () => string | null;
  /** Called when a filter or the page size changes: the owner polls again. */
  changed: () => void;
}

const STATES: [string, string][] = [
  ['', 'any state'],
  ['running', 'running'],
  ['ended', 'ended'],
  ['SUCCEEDED', 'succeeded'],
  ['FAILED', 'failed'],
  ['CANCELLED', 'cancelled']
];

class RowView {
  readonly node: HTMLElement;

  constructor(
    private readonly sidebar: JobsSidebar,
    row: IJobRow,
    private readonly nested = false
  ) {
    this.node = el('div', nested ? 'jsl-row jsl-run' : 'jsl-row');
    this.node.tabIndex = 0;
    this.node.append(this.pillSlot, this.main);
    this.main.append(this.top, this.sub, this.spark);
    this.top.append(this.name, this.cancel);
    this.spark.append(this.sparkLine, this.sparkValue, this.sparkKeyText);
    this.spark.hidden = true;
    this.cancel.onclick = event => {
      event.stopPropagation();
      void this.sidebar.confirmCancel(this.row, this.cancel);
    };
    this.node.onclick = () => this.sidebar.options.open(this.row.handle);
    this.node.onkeydown = event => {
      if (event.key === 'Enter') {
        this.sidebar.options.open(this.row.handle);
      }
    };
    this.row = row;
    this.sidebar.watch(this);
  }

  update(row: IJobRow, now: number): void {
    this.row = row;
    const running = row.running;
    this.node.dataset.handle = row.handle;
    this.node.dataset.state = row.state;
    this.node.title = visible(row.reason ? `${row.reason}\n${row.handle}` : row.handle, '\n');
    if (this.pillSlot.dataset.state !== row.state) {
      this.pillSlot.dataset.state = row.state;
      this.pillSlot.replaceChildren(pill(row.state));
    }
    // a sweep's run: its label ("run 007") is what tells it apart (the sweep's name is on the row above)
    setText(this.name, this.nested ? row.label : row.name);
    const sub = [
      elapsed(row.started, row.ended, running, now),
      row.scheduler,
      row.session !== 'default' ? `session ${row.session}` : '',
      usageText(row.usage, running)
    ];
    if (!running && row.state !== 'SUCCEEDED' && row.reason) {
      sub.push(row.reason.slice(row.name.length + 1));
    }
    setText(this.sub, sub.filter(Boolean).join(' · '));
    this.cancel.hidden = !running;
    if (!running) {
      this.cancel.disabled = false;
      setText(this.cancel, 'Cancel');
    }
    this.updateSpark(row);
  }

  /** Whether the row is on screen (the sidebar's IntersectionObserver says): only then it asks for points. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.fetchSpark();
  }

  /** The main metric: its last value as text, the tooltip, and new points if its summary moved. */
  private updateSpark(row: IJobRow): void {
    const main = row.metrics && row.metrics.length ? row.metrics[0] : null;
    this.spark.hidden = !main;
    if (!main) {
      return;
    }
    if (main.key !== this.sparkKey) {
      // a new main key (a goal defined later puts its key first): its own line, from the start
      this.sparkKey = main.key;
      this.sparkPoints = [];
      this.sparkCursor = '';
      this.sparkSeen = '';
      this.sparkLine.replaceChildren(sparkline([]));
    }
    this.spark.dataset.key = main.key;
    setText(this.sparkKeyText, main.key);
    setText(this.sparkValue, formatValue(main.last, 4)); // the tooltip has six digits, as the tables
    const at = main.step !== null ? ` at step ${main.step}` : '';
    const best = main.goal ? `, best ${formatValue(main.best)} (${main.goal})` : '';
    this.spark.title = `${main.key}: last ${formatValue(main.last)}${at}${best}`;
    this.sparkWanted = `${main.step}|${String(main.last)}`;
    this.fetchSpark();
  }

  private fetchSpark(): void {
    if (!this.visible || this.sparkBusy || !this.sparkKey || this.sparkWanted === this.sparkSeen) {
      return;
    }
    const key = this.sparkKey;
    const wanted = this.sparkWanted;
    this.sparkBusy = true;
    getMetrics(this.row.handle, { keys: key, max_points: SPARK_POINTS, since: this.sparkCursor || undefined })
      .then(
        answer => {
          if (key !== this.sparkKey) {
            return; // the main key changed meanwhile: the next update asks for the new one
          }
          this.sparkCursor = answer.cursor;
          const fresh: IMetricPoint[] = answer.series[key] || [];
          if (fresh.length || !this.sparkLine.firstChild) {
            this.sparkPoints = downsample(this.sparkPoints.concat(fresh), SPARK_POINTS);
            this.sparkLine.replaceChildren(sparkline(this.sparkPoints));
            this.spark.dataset.points = String(this.sparkPoints.length);
          }
        },
        () => {
          // the row still shows the last value; the line is asked again when the summary moves
        }
      )
      .finally(() => {
        this.sparkSeen = wanted;
        this.sparkBusy = false;
        if (this.sparkWanted !== wanted) {
          this.fetchSpark(); // the summary moved while the answer was on its way
        }
      });
  }

  row: IJobRow;
  private visible = false;
  private spark = el('div', 'jsl-row-spark');
  private sparkKeyText = el('span', 'jsl-spark-key');
  private sparkLine = el('span', 'jsl-spark-line-slot');
  private sparkValue = el('span', 'jsl-spark-value');
  private sparkKey = '';
  private sparkPoints: IMetricPoint[] = [];
  private sparkCursor = '';
  /** The main metric's `step|last` now, and when the points were last asked for. */
  private sparkWanted = '';
  private sparkSeen = '';
  private sparkBusy = false;
  private pillSlot = el('span', 'jsl-row-pill');
  private main = el('div', 'jsl-row-main');
  private top = el('div', 'jsl-row-top');
  private name = el('span', 'jsl-row-name');
  private sub = el('div', 'jsl-row-sub');
  private cancel = el('button', 'jp-Button jp-mod-styled jp-mod-warn jsl-row-cancel', 'Cancel');
}

class SweepView {
  readonly node = el('div', 'jsl-sweep');

  constructor(
    private readonly sidebar: JobsSidebar,
    row: ISweepRow
  ) {
    this.head.tabIndex = 0;
    this.head.append(this.caret, this.pillSlot, this.main);
    this.main.append(this.top, this.sub);
    this.top.append(this.name);
    this.node.append(this.head, this.runs);
    this.head.onclick = () => this.sidebar.toggle(this.row.sweep);
    this.more.onclick = () => this.sidebar.showSweep(this.row.sweep);
    this.row = row;
  }

  update(row: ISweepRow, now: number, open: boolean): void {
    this.row = row;
    const running = row.running;
    this.node.dataset.handle = row.handle;
    this.node.dataset.sweep = row.sweep;
    this.head.dataset.handle = row.handle;
    this.head.dataset.state = row.state;
    if (this.pillSlot.dataset.state !== row.state) {
      this.pillSlot.dataset.state = row.state;
      this.pillSlot.replaceChildren(pill(row.state));
    }
    setText(this.caret, open ? '▾' : '▸');
    // the sweep's name as given (the server's label: without the random id that keeps two sweeps apart)
    setText(this.name, row.label);
    this.head.title = visible(`sweep ${row.sweep}`);
    const counts = Object.entries(row.counts)
      .sort((a, b) => b[1] - a[1])
      .map(([state, n]) => `${n} ${state.toLowerCase()}`);
    setText(this.sub, [`sweep of ${row.total}`, ...counts, elapsed(row.started, row.ended, running, now), row.scheduler].join(' · '));
    this.runs.hidden = !open;
    if (open) {
      const seen = new Set<string>();
      const children: HTMLElement[] = [];
      for (const run of row.runs) {
        let view = this.views.get(run.handle);
        if (!view) {
          view = new RowView(this.sidebar, run, true);
          this.views.set(run.handle, view);
        }
        view.update(run, now);
        seen.add(run.handle);
        children.push(view.node);
      }
      for (const [handle, view] of Array.from(this.views.entries())) {
        if (!seen.has(handle)) {
          this.sidebar.unwatch(view);
          this.views.delete(handle);
        }
      }
      if (row.more) {
        setText(this.more, `and ${row.more} more: show all runs`);
        children.push(this.more);
      }
      place(this.runs, children);
    }
  }

  /** Its runs' rows stop being watched (the sweep left the list). */
  forget(): void {
    for (const view of this.views.values()) {
      this.sidebar.unwatch(view);
    }
    this.views.clear();
  }

  row: ISweepRow;
  private head = el('div', 'jsl-row jsl-sweep-head');
  private caret = el('span', 'jsl-caret');
  private pillSlot = el('span', 'jsl-row-pill');
  private main = el('div', 'jsl-row-main');
  private top = el('div', 'jsl-row-top');
  private name = el('span', 'jsl-row-name');
  private sub = el('div', 'jsl-row-sub');
  private runs = el('div', 'jsl-sweep-runs');
  private more = el('button', 'jsl-link', '');
  private views = new Map<string, RowView>();
}


/** Makes `parent`'s children exactly `children`, in order, moving only what moved. */
function place(parent: HTMLElement, children: HTMLElement[]): void {
  children.forEach((child, i) => {
    if (parent.children[i] !== child) {
      parent.insertBefore(child, parent.children[i] || null);
    }
  });
  while (parent.children.length > children.length) {
    parent.lastElementChild!.remove();
  }
}

export class JobsSidebar extends Widget {
  readonly filters: IFilters = { notebook: false, session: '', scheduler: '', state: '' };
  limit = PAGE;
  /** A sweep shown whole (its "show all runs"), else ''. */
  sweep = '';

  constructor(readonly options: ISidebarOptions) {
    super();
    this.id = 'jupyter-sched-jobs';
    this.addClass('jsl-sidebar');
    this.title.caption = 'Jobs';
    const header = el('div', 'jsl-sidebar-header');
    header.append(el('span', 'jsl-sidebar-title', 'Jobs'), this.summary);
    const filters = el('div', 'jsl-filters');
    const mine = el('label', 'jsl-filter-notebook');
    this.notebookBox.type = 'checkbox';
    this.notebookBox.onchange = () => {
      this.filters.notebook = this.notebookBox.checked;
      this.changed();
    };
    mine.append(this.notebookBox, el('span', '', 'This notebook'));
    this.sessionSelect.title = 'session';
    this.schedulerSelect.title = 'backend';
    this.stateSelect.title = 'state';
    for (const [value, label] of STATES) {
      const option = el('option', '', label);
      option.value = value;
      this.stateSelect.appendChild(option);
    }
    this.sessionSelect.onchange = () => this.onSelect('session', this.sessionSelect.value);
    this.schedulerSelect.onchange = () => this.onSelect('scheduler', this.schedulerSelect.value);
    this.stateSelect.onchange = () => this.onSelect('state', this.stateSelect.value);
    filters.append(mine, this.sessionSelect, this.schedulerSelect, this.stateSelect);
    this.moreButton.onclick = () => {
      this.limit += PAGE;
      this.changed();
    };
    this.sweepBar.hidden = true;
    this.node.append(header, filters, this.sweepBar, this.notices, this.list, this.empty, this.moreButton);
    this.fillSelect(this.sessionSelect, [], 'any session');
    this.fillSelect(this.schedulerSelect, [], 'any backend');
  }

  /** The list's query for the current filters. */
  query(): { [key: string]: string } {
    const query: { [key: string]: string } = { limit: String(this.limit) };
    if (this.filters.notebook) {
      query.notebook = this.options.currentNotebook() || '(no notebook open)';
    }
    for (const key of ['session', 'scheduler', 'state'] as const) {
      if (this.filters[key]) {
        query[key] = this.filters[key];
      }
    }
    if (this.sweep) {
      query.sweep = this.sweep;
    }
    return query;
  }

  setList(list: IJobList): void {
    const now = Date.now() / 1000;
    this.fillSelect(this.sessionSelect, list.sessions, 'any session');
    this.fillSelect(this.schedulerSelect, list.schedulers, 'any backend');
    setText(this.summary, `${list.running} running · ${list.apps} jobs`);
    this.notices.replaceChildren(...list.notices.map(n => el('div', 'jsl-notice', n)));
    const children: HTMLElement[] = [];
    const seen = new Set<string>();
    for (const row of list.jobs) {
      seen.add(row.handle);
      if (row.kind === 'sweep') {
        let view = this.sweeps.get(row.handle);
        if (!view) {
          view = new SweepView(this, row);
          this.sweeps.set(row.handle, view);
        }
        view.update(row, now, this.opened.has(row.sweep));
        children.push(view.node);
      } else {
        let view = this.rows.get(row.handle);
        if (!view) {
          view = new RowView(this, row);
          this.rows.set(row.handle, view);
        }
        view.update(row, now);
        children.push(view.node);
      }
    }
    for (const [handle, view] of Array.from(this.rows.entries())) {
      if (!seen.has(handle)) {
        this.unwatch(view);
        this.rows.delete(handle);
      }
    }
    for (const handle of Array.from(this.sweeps.keys())) {
      if (!seen.has(handle)) {
        this.sweeps.get(handle)!.forget();
        this.sweeps.delete(handle);
      }
    }
    place(this.list, children);
    this.empty.hidden = list.jobs.length > 0;
    setText(
      this.empty,
      this.filters.notebook && !this.options.currentNotebook()
        ? 'No notebook is open.'
        : 'No jobs match. Launch one with %sched_run, jupyter-sched run, or get_runner().run(...).'
    );
    this.moreButton.hidden = list.total <= list.jobs.length;
    setText(this.moreButton, `Show more (${list.total - list.jobs.length} more)`);
  }

  /** Tells `view` whenever its row comes on screen or leaves it (only rows on screen ask for sparklines). */
  watch(view: RowView): void {
    this.watched.set(view.node, view);
    this.observer.observe(view.node);
  }

  unwatch(view: RowView): void {
    this.watched.delete(view.node);
    this.observer.unobserve(view.node);
  }

  dispose(): void {
    this.observer.disconnect();
    this.watched.clear();
    super.dispose();
  }

  showError(message: string): void {
    this.notices.replaceChildren(el('div', 'jsl-notice jsl-error', message));
  }

  toggle(sweep: string): void {
    if (this.opened.has(sweep)) {
      this.opened.delete(sweep);
    } else {
      this.opened.add(sweep);
    }
    this.changed();
  }

  /** Lists every run of one sweep (and a bar to go back). */
  showSweep(sweep: string): void {
    this.sweep = sweep;
    this.sweepBar.replaceChildren(el('span', '', `runs of sweep ${sweep}`));
    const back = el('button', 'jsl-link', 'back to all jobs');
    back.onclick = () => this.showSweep('');
    this.sweepBar.appendChild(back);
    this.sweepBar.hidden = !sweep;
    this.changed();
  }

  async confirmCancel(row: IJobRow, button: HTMLButtonElement): Promise<void> {
    const outcome = await askToCancel(row.name, row.handle, button);
    if (outcome.kind === 'kept') {
      return;
    }
    if (outcome.kind === 'failed') {
      this.showError(`could not cancel ${row.handle}: ${outcome.message}`);
      button.disabled = false;
      button.textContent = 'Cancel';
    }
    this.changed();
  }

  /** The "This notebook" filter follows the focused notebook. */
  notebookChanged(): void {
    if (this.filters.notebook) {
      this.changed();
    }
  }

  private onSelect(key: 'session' | 'scheduler' | 'state', value: string): void {
    this.filters[key] = value;
    this.limit = PAGE;
    this.changed();
  }

  private changed(): void {
    this.options.changed();
  }

  private fillSelect(select: HTMLSelectElement, values: string[], all: string): void {
    const wanted = ['', ...values];
    const current = select.value;
    if (Array.from(select.options).map(o => o.value).join('\n') === wanted.join('\n')) {
      return;
    }
    select.replaceChildren(
      ...wanted.map(value => {
        const option = el('option', '', value || all);
        option.value = value;
        return option;
      })
    );
    select.value = wanted.includes(current) ? current : '';
  }

  private summary = el('span', 'jsl-sidebar-summary');
  private notebookBox = el('input');
  private sessionSelect = el('select', 'jsl-select');
  private schedulerSelect = el('select', 'jsl-select');
  private stateSelect = el('select', 'jsl-select');
  private sweepBar = el('div', 'jsl-sweep-bar');
  private notices = el('div', 'jsl-notices');
  private list = el('div', 'jsl-list');
  private empty = el('div', 'jsl-empty');
  private moreButton = el('button', 'jp-Button jp-mod-styled jsl-more', 'Show more');
  private rows = new Map<string, RowView>();
  private sweeps = new Map<string, SweepView>();
  private opened = new Set<string>();
  private watched = new Map<Element, RowView>();
  private observer = new IntersectionObserver(entries => {
    for (const entry of entries) {
      this.watched.get(entry.target)?.setVisible(entry.isIntersecting);
    }
  });
}
