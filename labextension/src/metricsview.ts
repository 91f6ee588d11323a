/**
 * The job view's Metrics section: one chart per key of what the job logged with `jupyter_sched.track`
 * (a line by step, axes, the last value and the best by goal), for one replica: the first role's replica 0
 * by default, another from the picker when several have metrics.
 *
 * It reads `GET jobs/<handle>/metrics` from a cursor: the first answer brings every record (each series
 * cut to 1,000 points by the server, keeping each bucket's min and max), each later one only the records
 * written since, which are appended and the series cut to 1,000 again. The view asks once per refresh
 * (every second) while the job runs, so the charts are redrawn at most once a second and only when new
 * points came; once the job has ended it reads on until an answer brings nothing new, then stops.
 */
import { ApiError, getMetrics } from './api';
import { chart, downsample } from './charts';
import { el, setText } from './format';
import type { IJobMetricsAnswer, IMetricPoint, IMetricStats } from './model';

/** Points kept per series (as the notebook's pane). */
export const MAX_POINTS = 1000;

export class MetricsSection {
  readonly node = el('div', 'jsl-metrics');

  constructor(private readonly handle: string) {
    this.node.hidden = true;
    const bar = el('div', 'jsl-metrics-bar');
    bar.append(el('span', 'jsl-metrics-title', 'metrics'), this.picker, this.foot);
    this.picker.title = 'replica';
    this.picker.hidden = true;
    this.picker.onchange = () => this.pick(this.picker.value);
    this.node.append(bar, this.charts);
  }

  dispose(): void {
    this.stopped = true;
  }

  /**
   * Asks for the records written since the last answer (if a request is on its way, once more after it). `running`:
   * whether the job still runs; once it has ended the section reads on until nothing new comes.
   */
  poll(running: boolean): void {
    this.running = running;
    if (this.stopped || this.finished) {
      return;
    }
    if (this.busy) {
      // asked again while an answer is on its way (perhaps because the job has just ended): ask once more
      // when it comes, or the records written last could be missed
      this.again = true;
      return;
    }
    this.busy = true;
    this.again = false;
    const generation = this.generation;
    const before = this.cursor;
    getMetrics(this.handle, {
      since: this.cursor || undefined,
      max_points: MAX_POINTS,
      role: this.role ?? undefined,
      k: this.role === null ? undefined : this.k
    }).then(
      answer => {
        if (this.stopped || generation !== this.generation) {
          return;
        }
        this.busy = false;
        this.take(answer);
        if (!running && answer.cursor === before) {
          this.finished = true; // asked after the job was seen ended, and nothing new came: that was all
        } else if (!this.running || this.again) {
          this.poll(this.running); // the job has ended: read on to the end of its records
        }
      },
      error => {
        if (this.stopped || generation !== this.generation) {
          return;
        }
        this.busy = false;
        const message = error instanceof ApiError ? error.message : String(error);
        setText(this.foot, `cannot read the metrics: ${message}`);
        this.node.hidden = false;
        if (!running) {
          this.finished = true;
        } else if (this.again) {
          this.poll(this.running);
        }
      }
    );
  }

  private take(answer: IJobMetricsAnswer): void {
    this.cursor = answer.cursor;
    this.role = answer.role;
    this.k = answer.replica;
    this.showReplicas(answer);
    const changed = new Set<string>();
    for (const [key, fresh] of Object.entries(answer.series)) {
      if (fresh.length || !this.series.has(key)) {
        this.series.set(key, downsample((this.series.get(key) || []).concat(fresh), MAX_POINTS));
        changed.add(key);
      }
    }
    for (const [key, stats] of Object.entries(answer.summary)) {
      if (JSON.stringify(stats) !== JSON.stringify(this.summary[key])) {
        changed.add(key);
      }
    }
    this.summary = answer.summary;
    this.skipped += answer.skipped;
    const keys = Array.from(this.series.keys()).sort((a, b) => {
      const goal = Number(!this.summary[a]?.goal) - Number(!this.summary[b]?.goal);
      return goal || (a < b ? -1 : a > b ? 1 : 0);
    });
    this.node.hidden = keys.length === 0;
    for (const key of changed) {
      if (this.series.has(key)) {
        const node = chart(key, this.series.get(key)!, this.summary[key]);
        this.nodes.get(key)?.replaceWith(node);
        this.nodes.set(key, node);
      }
    }
    keys.forEach((key, i) => {
      const node = this.nodes.get(key)!;
      if (this.charts.children[i] !== node) {
        this.charts.insertBefore(node, this.charts.children[i] || null);
      }
    });
    const replica = this.role !== null ? `${this.role}/${this.k}` : '';
    const skipped = this.skipped ? ` · ${this.skipped} unreadable lines skipped` : '';
    setText(this.foot, `${replica}${skipped}`);
  }

  private showReplicas(answer: IJobMetricsAnswer): void {
    const options = answer.replicas.map(r => `${r.role}/${r.replica}`);
    const current = answer.role !== null ? `${answer.role}/${answer.replica}` : '';
    if (current && !options.includes(current)) {
      options.unshift(current);
    }
    this.picker.hidden = options.length < 2;
    if (Array.from(this.picker.options).map(o => o.value).join('\n') !== options.join('\n')) {
      this.picker.replaceChildren(
        ...options.map(value => {
          const option = el('option', '', value);
          option.value = value;
          return option;
        })
      );
    }
    this.picker.value = current;
  }

  /** Charts another replica (`role/k`) from its first record. */
  private pick(value: string): void {
    const slash = value.lastIndexOf('/');
    this.role = value.slice(0, slash);
    this.k = Number(value.slice(slash + 1));
    this.generation += 1;
    this.cursor = '';
    this.series.clear();
    this.nodes.clear();
    this.summary = {};
    this.skipped = 0;
    this.charts.replaceChildren();
    this.busy = false; // the answer on its way is of the other replica: it is dropped when it comes
    this.again = false;
    this.finished = false;
    this.poll(this.running);
  }

  private picker = el('select', 'jsl-select jsl-metrics-replica');
  private foot = el('span', 'jsl-metrics-foot');
  private charts = el('div', 'jsl-charts');
  private series = new Map<string, IMetricPoint[]>();
  private nodes = new Map<string, HTMLElement>();
  private summary: { [key: string]: IMetricStats } = {};
  private cursor = '';
  private role: string | null = null;
  private k = 0;
  private skipped = 0;
  private busy = false;
  private again = false;
  private finished = false;
  private stopped = false;
  /** Whether the job ran at the last poll (a replica picked after it ended is read to its end). */
  private running = true;
  private generation = 0;
}
