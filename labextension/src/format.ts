/**
 * Small DOM and text helpers. Every text that comes from a job (names, handles, messages) is set with
 * textContent, never as HTML, and with its control and bidirectional characters escaped (`visible`); the only HTML inserted is log lines the server escaped
 * (jupyter_sched.logs.TerminalBuffer: every character of log text escaped, styles inline).
 */
import { IUsage } from './api';

// what a terminal or a text layout acts on rather than shows: C0 and C1 controls, DEL, line and paragraph
// separators, the bidirectional marks, embeddings, overrides and isolates (U+202E writes what follows
// backwards); the same set as jupyter_sched.logs.control_strings.CONTROL_CHAR, which the CLI escapes
// eslint-disable-next-line no-control-regex
const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: { [ch: string]: string } = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * `text` with every control and bidirectional character written as a visible escape (`\u202e`, `\x1b`),
 * except those in `keep`: a job's or a role's name shows as exactly what it is and reorders nothing
 * around it. Every text set through `el` and `setText` goes through it (newlines and tabs kept).
 */
export function visible(text: string, keep = ''): string {
  return text.replace(CONTROL_CHAR, ch => {
    if (keep.includes(ch)) {
      return ch;
    }
    if (NAMED[ch]) {
      return NAMED[ch];
    }
    const code = ch.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Sets `node`'s text (shown with `visible`, newlines and tabs kept) only if it changed. */
export function setText(node: HTMLElement, text: string): void {
  const shown = visible(text, '\n\t');
  if (node.textContent !== shown) {
    node.textContent = shown;
  }
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = visible(text, '\n\t');
  }
  return node;
}

export function pill(state: string): HTMLElement {
  const node = el('span', `jsl-pill jsl-state-${state.toLowerCase()}`, state);
  node.title = state;
  return node;
}

const SIGNALS: { [n: number]: string } = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  6: 'SIGABRT',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  15: 'SIGTERM'
};

/**
 * An exit code as the panes and `JobFailed` spell it (jupyter_sched.frontend.jobs.reasons.exit_text): `1`,
 * `-15 (SIGTERM)`, `137 (128+SIGKILL)`; `fallback` when there is none.
 */
export function exitText(code: number | null, fallback = ''): string {
  if (code === null) {
    return fallback;
  }
  const name = SIGNALS[code < 0 ? -code : code > 128 && code < 160 ? code - 128 : 0];
  if (!name) {
    return String(code);
  }
  return code < 0 ? `${code} (${name})` : `${code} (128+${name})`;
}

/** `4.2s`, `3m05s`, `2h01m`. */
export function duration(seconds: number): string {
  if (!isFinite(seconds) || seconds < 0) {
    return '-';
  }
  if (seconds < 60) {
    return `${seconds.toFixed(seconds < 10 ? 1 : 0)}s`;
  }
  const m = Math.floor(seconds / 60);
  if (m < 60) {
    return `${m}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
  }
  const h = Math.floor(m / 60);
  if (h < 48) {
    return `${h}h${String(m % 60).padStart(2, '0')}m`;
  }
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/** `running 3m05s`, `took 4.2s`, `waiting`. */
export function elapsed(started: number | null, ended: number | null, running: boolean, now: number): string {
  if (!started) {
    return running ? 'waiting' : 'ended';
  }
  if (running) {
    return `running ${duration(now - started)}`;
  }
  return ended ? `took ${duration(ended - started)}` : 'ended';
}

/** Binary units: `63.9 MiB`. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) {
    return '-';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1).replace(/\.0$/, '')} ${units[unit]}`;
}

export function usageText(usage: IUsage | null | undefined, running: boolean): string {
  if (!usage) {
    return '';
  }
  if (running && usage.cpu_percent !== null) {
    return `cpu ${usage.cpu_percent.toFixed(0)}% · mem ${bytes(usage.rss_bytes)}`;
  }
  const parts: string[] = [];
  if (usage.peak_rss_bytes) {
    parts.push(`peak ${bytes(usage.peak_rss_bytes)}`);
  }
  if (usage.cpu_seconds) {
    parts.push(`cpu ${usage.cpu_seconds.toFixed(1)}s`);
  }
  return parts.join(' · ');
}

export function clock(ts: number | null): string {
  if (!ts) {
    return '-';
  }
  const date = new Date(ts * 1000);
  const today = new Date();
  const time = date.toLocaleTimeString([], { hour12: false });
  return date.toDateString() === today.toDateString() ? time : `${date.toISOString().slice(0, 10)} ${time}`;
}
