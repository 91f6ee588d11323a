/**
 * The job view's tracker block: what the job told TorchX's tracker API (`app_run_from_env()`), as the
 * server's `tracker` field of the job's detail has it (the job's own run first, bounded, masked): metadata
 * as `key = value`, artifacts as `name → path`. Every key, value, name and path is the job's text: set as
 * text through `el` (never as markup); a record's HTML is the same DOM serialized, so the browser escaped it.
 * Styles are inline (theme variables), so a record saved in a notebook looks the same without this CSS.
 */

import { el, visible } from './format';
import { ITrackerRunJson } from './model';

const MAX_VALUE_CHARS = 200;
const BLOCK_STYLE = 'font-size:12px;line-height:1.45;margin:6px 0;color:var(--jp-content-font-color1, inherit)';
const KEY_STYLE = 'opacity:0.8';
const VALUE_STYLE = 'background:rgba(128,128,128,0.12);border-radius:3px;padding:0 4px;font-size:12px';
const NOTE_STYLE = 'font-size:11px;opacity:0.7';

function styled<T extends HTMLElement>(node: T, css: string): T {
  node.style.cssText = css;
  return node;
}

/** A metadata value as the block shows it: text as it is, anything else as compact JSON; cut. */
export function shownValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length <= MAX_VALUE_CHARS ? text : text.slice(0, MAX_VALUE_CHARS - 1) + '…';
}

function heading(run: ITrackerRunJson, handle: string): string {
  return run.run_id === handle ? 'tracker' : `tracker of run ${run.run_id}`;
}

function notes(run: ITrackerRunJson): string[] {
  const out: string[] = [];
  if (run.more_metadata > 0) {
    out.push(`${run.more_metadata} more keys: jupyter-sched describe has them all`);
  }
  if (run.more_artifacts > 0) {
    out.push(`${run.more_artifacts} more artifacts: jupyter-sched describe has them all`);
  }
  return out;
}

/** The block as DOM (empty while the job told the tracker nothing). */
export function fillTracker(node: HTMLElement, runs: ITrackerRunJson[], handle: string): void {
  node.replaceChildren();
  node.hidden = runs.length === 0;
  node.style.cssText = BLOCK_STYLE;
  for (const run of runs) {
    const section = el('div', 'jsl-tracker-run');
    section.appendChild(styled(el('div', 'jsl-tracker-title', heading(run, handle)), 'font-weight:600'));
    for (const [key, value] of Object.entries(run.metadata)) {
      const line = el('div', 'jsl-tracker-line');
      line.append(
        styled(el('span', 'jsl-tracker-key', key), KEY_STYLE),
        ' = ',
        styled(el('code', 'jsl-tracker-value', shownValue(value)), VALUE_STYLE)
      );
      section.appendChild(line);
    }
    for (const artifact of run.artifacts) {
      const line = el('div', 'jsl-tracker-line');
      line.append(
        styled(el('span', 'jsl-tracker-key', artifact.name), KEY_STYLE),
        ' → ',
        styled(el('code', 'jsl-tracker-value', artifact.path), VALUE_STYLE)
      );
      section.appendChild(line);
    }
    const more = notes(run);
    if (more.length) {
      section.appendChild(styled(el('div', 'jsl-tracker-note', more.join('; ')), NOTE_STYLE));
    }
    node.appendChild(section);
  }
}

/** The block as a record's HTML: the DOM of {@link fillTracker}, serialized ("" without runs). */
export function trackerHTML(runs: ITrackerRunJson[], handle: string): string {
  if (!runs.length) {
    return '';
  }
  const node = document.createElement('div');
  node.className = 'jsched-tracker';
  fillTracker(node, runs, handle);
  return node.outerHTML;
}

/** The block as lines of text, for a record's text/plain. */
export function trackerText(runs: ITrackerRunJson[], handle: string): string[] {
  return runs.flatMap(run => [
    `${heading(run, handle)}:`,
    ...Object.entries(run.metadata).map(([key, value]) => `  ${key} = ${shownValue(value)}`),
    ...run.artifacts.map(a => `  ${a.name} → ${a.path}`),
    ...notes(run).map(n => `  (${n})`)
  ]).map(line => visible(line));
}
