/**
 * Metric charts as inline SVG, built with DOM APIs (never markup from strings: a metric's key is the job's
 * text, untrusted): the sidebar's sparkline of a row's main metric, and the job view's chart per key (a
 * line by step, axes, the last value and the best by goal), the same curves the notebook's pane draws.
 *
 * Values come as strict JSON carries them: numbers, or "NaN", "Infinity", "-Infinity". A non-finite value
 * is no point on the line: it breaks it, so a gap shows where a run diverged.
 */
import type { IMetricPoint, IMetricStats } from './model';

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: { [name: string]: string | number } = {},
  text?: string
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    node.setAttribute(name, String(value));
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A value as the API sends it, as a number (NaN and the infinities from their strict-JSON names). */
export function numberOf(value: number | string | null | undefined): number {
  if (typeof value === 'number') {
    return value;
  }
  if (value === 'Infinity') {
    return Infinity;
  }
  if (value === '-Infinity') {
    return -Infinity;
  }
  return NaN;
}

/**
 * A value as the tables show it (`frontend.jobs.metrics.format_value`): an integral value as an integer,
 * else six significant digits (`digits`: fewer, where room is short); NaN and the infinities by name;
 * nothing as `-`.
 */
export function formatValue(value: number | string | null | undefined, digits = 6): string {
  if (value === null || value === undefined) {
    return '-';
  }
  const x = numberOf(value);
  if (Number.isNaN(x)) {
    return 'NaN';
  }
  if (!Number.isFinite(x)) {
    return x > 0 ? 'Infinity' : '-Infinity';
  }
  if (Number.isInteger(x) && Math.abs(x) < 1e15) {
    return String(x);
  }
  return String(Number(x.toPrecision(digits)));
}

/**
 * At most `max` of `points` (in order), as the server's `downsample` keeps them: the first, the last, and
 * each bucket's smallest and largest value, so a spike between two kept points is never smoothed away.
 * The views append each poll's new points and cut the whole series again, so it stays bounded.
 */
export function downsample(points: IMetricPoint[], max: number): IMetricPoint[] {
  const n = points.length;
  if (n <= max) {
    return points;
  }
  const inner = n - 2;
  const count = Math.max(1, Math.floor((max - 2) / 2));
  const keep: IMetricPoint[] = [points[0]];
  for (let b = 0; b < count; b++) {
    const start = 1 + Math.floor((b * inner) / count);
    const end = 1 + Math.floor(((b + 1) * inner) / count);
    let low = -1;
    let high = -1;
    for (let i = start; i < end; i++) {
      const v = numberOf(points[i].value);
      if (Number.isNaN(v)) {
        continue;
      }
      if (low < 0 || v < numberOf(points[low].value)) {
        low = i;
      }
      if (high < 0 || v > numberOf(points[high].value)) {
        high = i;
      }
    }
    if (low < 0) {
      keep.push(points[start]); // a bucket of NaNs keeps its first point: the gap still shows
    } else if (low === high) {
      keep.push(points[low]);
    } else {
      keep.push(points[Math.min(low, high)], points[Math.max(low, high)]);
    }
  }
  keep.push(points[n - 1]);
  return keep;
}

interface IXY {
  x: number;
  y: number;
}

/** The x of each point: its step, or its place when it was logged without one. */
function xOf(point: IMetricPoint, index: number): number {
  return point.step === null ? index : point.step;
}

/** Runs of finite points (a NaN or an infinity ends one). */
function segments(points: IMetricPoint[]): IXY[][] {
  const out: IXY[][] = [];
  let run: IXY[] = [];
  points.forEach((point, i) => {
    const y = numberOf(point.value);
    if (Number.isFinite(y)) {
      run.push({ x: xOf(point, i), y });
    } else if (run.length) {
      out.push(run);
      run = [];
    }
  });
  if (run.length) {
    out.push(run);
  }
  return out;
}

function extent(values: number[]): [number, number] {
  let low = Infinity;
  let high = -Infinity;
  for (const v of values) {
    low = Math.min(low, v);
    high = Math.max(high, v);
  }
  if (low === high) {
    const pad = low === 0 ? 1 : Math.abs(low) * 0.05;
    return [low - pad, high + pad];
  }
  return [low, high];
}

function polylines(runs: IXY[][], sx: (x: number) => number, sy: (y: number) => number, cls: string): SVGElement[] {
  return runs.map(run => {
    if (run.length === 1) {
      return svg('circle', { cx: sx(run[0].x).toFixed(1), cy: sy(run[0].y).toFixed(1), r: 1.5, class: cls + '-dot' });
    }
    const d = run.map(p => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
    return svg('polyline', { points: d, class: cls });
  });
}

export const SPARK_WIDTH = 48;
export const SPARK_HEIGHT = 16;

/** A sparkline of `points`: the line only, scaled to its own range (the text beside it says the value). */
export function sparkline(points: IMetricPoint[]): SVGSVGElement {
  const root = svg('svg', {
    class: 'jsl-spark-svg',
    width: SPARK_WIDTH,
    height: SPARK_HEIGHT,
    viewBox: `0 0 ${SPARK_WIDTH} ${SPARK_HEIGHT}`,
    'aria-hidden': 'true'
  });
  const runs = segments(points);
  const xs = runs.flat().map(p => p.x);
  const ys = runs.flat().map(p => p.y);
  if (!xs.length) {
    return root;
  }
  const [x0, x1] = extent(xs);
  const [y0, y1] = extent(ys);
  const sx = (x: number) => 1 + ((x - x0) / (x1 - x0)) * (SPARK_WIDTH - 2);
  const sy = (y: number) => SPARK_HEIGHT - 1.5 - ((y - y0) / (y1 - y0)) * (SPARK_HEIGHT - 3);
  root.append(...polylines(runs, sx, sy, 'jsl-spark-line'));
  return root;
}

/** A metric's best value by its goal ("min" or "max"), or null without a goal. */
export function bestOf(stats: IMetricStats | undefined): { value: number | string | null; step: number | null } | null {
  if (!stats || (stats.goal !== 'min' && stats.goal !== 'max')) {
    return null;
  }
  return stats.goal === 'min' ? { value: stats.min, step: stats.min_step } : { value: stats.max, step: stats.max_step };
}

const W = 320;
const H = 150;
const PAD = { left: 52, right: 10, top: 8, bottom: 22 };

/** A tick's value: three significant digits (a tick is a place on the axis, not a logged value). */
function tickText(value: number): string {
  return formatValue(value, 3);
}

/** Three tick values over [low, high]: its ends and its middle. */
function ticks(low: number, high: number): number[] {
  return [low, (low + high) / 2, high];
}

/**
 * One metric's chart: a header with its key, last value (and step) and best by goal, then an SVG with a
 * y axis (three values), an x axis (first and last step), and the line by step. `stats` is the replica's
 * summary of the key (all of its records, however the points were cut).
 */
export function chart(key: string, points: IMetricPoint[], stats: IMetricStats | undefined): HTMLElement {
  const box = document.createElement('div');
  box.className = 'jsl-chart';
  box.dataset.key = key;
  const head = document.createElement('div');
  head.className = 'jsl-chart-head';
  const name = document.createElement('span');
  name.className = 'jsl-chart-key';
  name.textContent = key;
  const last = points.length ? points[points.length - 1] : null;
  const lastValue = stats ? stats.last : last ? last.value : null;
  const lastStep = stats ? stats.last_step : last ? last.step : null;
  const facts = document.createElement('span');
  facts.className = 'jsl-chart-facts';
  const parts = [`last ${formatValue(lastValue)}` + (lastStep !== null ? ` at step ${lastStep}` : '')];
  const best = bestOf(stats);
  if (best) {
    const at = best.step !== null ? ` at step ${best.step}` : '';
    parts.push(`best ${formatValue(best.value)} (${stats!.goal})${at}`);
  }
  facts.textContent = parts.join(' · ');
  head.append(name, facts);
  box.appendChild(head);

  const root = svg('svg', { class: 'jsl-chart-svg', viewBox: `0 0 ${W} ${H}`, role: 'img' });
  root.appendChild(svg('title', {}, `${key}: ${parts.join(', ')}`));
  const runs = segments(points);
  const all = runs.flat();
  const left = PAD.left;
  const right = W - PAD.right;
  const top = PAD.top;
  const bottom = H - PAD.bottom;
  root.append(
    svg('line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'jsl-chart-axis' }),
    svg('line', { x1: left, y1: top, x2: left, y2: bottom, class: 'jsl-chart-axis' })
  );
  if (!all.length) {
    root.appendChild(
      svg('text', { x: (left + right) / 2, y: (top + bottom) / 2, class: 'jsl-chart-empty', 'text-anchor': 'middle' },
        points.length ? 'no finite values yet' : 'no values yet') // prettier-ignore
    );
    box.appendChild(root);
    return box;
  }
  const [x0, x1] = extent(all.map(p => p.x));
  const [y0, y1] = extent(all.map(p => p.y));
  const sx = (x: number) => left + ((x - x0) / (x1 - x0)) * (right - left);
  const sy = (y: number) => bottom - ((y - y0) / (y1 - y0)) * (bottom - top);
  for (const v of ticks(y0, y1)) {
    const y = sy(v).toFixed(1);
    root.append(
      svg('line', { x1: left, y1: y, x2: right, y2: y, class: 'jsl-chart-grid' }),
      svg('text', { x: left - 4, y, class: 'jsl-chart-tick', 'text-anchor': 'end', 'dominant-baseline': 'middle' },
        tickText(v)) // prettier-ignore
    );
  }
  const firstX = Math.min(...all.map(p => p.x));
  const lastX = Math.max(...all.map(p => p.x));
  const below = bottom + 14;
  root.append(
    svg('text', { x: sx(firstX), y: below, class: 'jsl-chart-tick', 'text-anchor': 'start' }, formatValue(firstX)),
    svg('text', { x: sx(lastX), y: below, class: 'jsl-chart-tick', 'text-anchor': 'end' }, formatValue(lastX)),
    svg('text', { x: (left + right) / 2, y: below, class: 'jsl-chart-label', 'text-anchor': 'middle' }, 'step')
  );
  root.append(...polylines(runs, sx, sy, 'jsl-chart-line'));
  if (best && best.step !== null) {
    const at = all.find(p => p.x === best.step && p.y === numberOf(best.value));
    if (at) {
      const mark = { cx: sx(at.x).toFixed(1), cy: sy(at.y).toFixed(1), r: 3, class: 'jsl-chart-best' };
      root.appendChild(svg('circle', mark));
    }
  }
  box.appendChild(root);
  return box;
}
