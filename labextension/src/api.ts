/**
 * The jobs API of jupyter_sched's server extension (`{base_url}jupyter-sched/api/`), through
 * JupyterLab's ServerConnection: the server's token and XSRF headers are added to every request.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { IEndedPage, IJobDetail, IJobMetricsAnswer, IJobPage } from './model';

export const API_PATH = 'jupyter-sched/api';

// What the server sends: generated from the Python rows (jupyter_sched/frontend/jobs/schema.py), so a field
// of a row is declared once. Labels, states, spans and counts come with the rows: nothing here derives them.
export type {
  IEndedPage,
  IEntry,
  IJobDetail,
  IJobMetricsAnswer,
  IJobPage as IJobList,
  IJobRow,
  IReplicaJson as IReplica,
  ISweepRow,
  IUsageSampleJson as IUsageSample,
  IUsageSummary as IUsage
} from './model';
/** What the live log stream sends (see jupyter_sched/server/logs.py). */
export interface ILogEvent {
  reset: boolean;
  html: string[];
  current: string;
  total: number;
  dropped: number;
  ended: boolean;
  error: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds the server asked to wait before asking again (a 503's Retry-After), if it said. */
    readonly retryAfter: number | null = null
  ) {
    super(message);
  }
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** Whether a replica's state is not an end (a job's and a sweep's rows say so themselves: `running`). */
export function replicaRunning(state: string): boolean {
  return !TERMINAL.has(state);
}

/** `jobs/<handle>`, the handle as one URL path segment. */
export function jobPath(handle: string): string {
  return 'jobs/' + encodeURIComponent(handle);
}

function url(settings: ServerConnection.ISettings, path: string, query?: { [key: string]: string }): string {
  const base = URLExt.join(settings.baseUrl, API_PATH, path);
  const params = query ? new URLSearchParams(query).toString() : '';
  return params ? `${base}?${params}` : base;
}

export async function requestAPI<T>(
  path: string,
  init: RequestInit = {},
  query?: { [key: string]: string }
): Promise<T> {
  const settings = ServerConnection.makeSettings();
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url(settings, path, query), init, settings);
  } catch (error) {
    throw new ApiError(0, `the Jupyter server did not answer: ${error}`);
  }
  const text = await response.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = data && data.message ? data.message : `${response.status} ${response.statusText}`;
    const retry = Number(response.headers.get('Retry-After'));
    throw new ApiError(response.status, message, Number.isFinite(retry) && retry > 0 ? retry : null);
  }
  return data as T;
}

export function listJobs(query: { [key: string]: string }): Promise<IJobPage> {
  return requestAPI<IJobPage>('jobs', {}, query);
}

/**
 * The jobs the server saw end after cursor `since` (`GET jobs/ended`), each once, and the cursor to give
 * next; with `since` null, the cursor of now and no jobs.
 */
export function endedSince(since: string | null): Promise<IEndedPage> {
  return requestAPI<IEndedPage>('jobs/ended', {}, since === null ? undefined : { since });
}

export function getJob(handle: string): Promise<IJobDetail> {
  return requestAPI<IJobDetail>(jobPath(handle));
}

/**
 * One replica's metric series (`GET jobs/<handle>/metrics`): `keys` (comma-separated; all when empty),
 * each at most `max_points`; `since` (a previous answer's cursor) for only the newer records; `role` and
 * `k` to pick a replica (the first role's replica 0 by default).
 */
export function getMetrics(
  handle: string,
  query: { keys?: string; since?: string; max_points?: number; role?: string; k?: number }
): Promise<IJobMetricsAnswer> {
  const params: { [key: string]: string } = {};
  if (query.keys) {
    params.keys = query.keys;
  }
  if (query.since) {
    params.since = query.since;
  }
  if (query.max_points !== undefined) {
    params.max_points = String(query.max_points);
  }
  if (query.role !== undefined) {
    params.role = query.role;
  }
  if (query.k !== undefined) {
    params.k = String(query.k);
  }
  return requestAPI<IJobMetricsAnswer>(jobPath(handle) + '/metrics', {}, params);
}

export interface ILogSnapshot {
  html: string[];
  current: string;
  total: number;
  role: string;
  k: number;
}

export function logSnapshot(handle: string, role: string, k: number, lines: number): Promise<ILogSnapshot> {
  return requestAPI<ILogSnapshot>(jobPath(handle) + '/logs', {}, { role, k: String(k), lines: String(lines) });
}

export function cancelJob(handle: string): Promise<{ cancelled: boolean; message: string; state: string }> {
  return requestAPI(jobPath(handle) + '/cancel', { method: 'POST' });
}

/**
 * Follows replica `role/k`'s log (server-sent events over fetch, so the server's auth headers go with
 * it). Calls `onEvent` per event and `onDone` once (with an error if it failed). Returns a function
 * that stops it.
 */
export function followLog(
  handle: string,
  role: string,
  k: number,
  onEvent: (event: ILogEvent) => void,
  onDone: (error?: Error) => void
): () => void {
  const controller = new AbortController();
  const settings = ServerConnection.makeSettings();
  const target = url(settings, jobPath(handle) + '/logs/stream', { role, k: String(k) });
  const run = async () => {
    const response = await ServerConnection.makeRequest(target, { signal: controller.signal }, settings);
    if (!response.ok || !response.body) {
      let message = `${response.status} ${response.statusText}`;
      try {
        message = JSON.parse(await response.text()).message || message;
      } catch {
        // keep the status line
      }
      throw new ApiError(response.status, message);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter(line => line.startsWith('data: '))
          .map(line => line.slice(6))
          .join('\n');
        if (data) {
          onEvent(JSON.parse(data) as ILogEvent);
        }
      }
    }
  };
  run().then(
    () => onDone(),
    error => {
      if (!controller.signal.aborted) {
        onDone(error instanceof Error ? error : new Error(String(error)));
      }
    }
  );
  return () => controller.abort();
}
