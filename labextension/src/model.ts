/**
 * What the jupyter_sched server sends, GENERATED from the row dataclasses: do not edit. Rewrite with
 *   python -m jupyter_sched.frontend.jobs.schema --typescript > labextension/src/model.ts
 * (jupyter_sched/frontend/jobs/schema.py; tests/frontend/test_jobs_schema.py checks it is current).
 */

/** What an app uses, summed over its replicas: CPU % (of one core) and resident memory now while it runs (None once it has ended), CPU time, and the largest replica's peak memory. */
export interface IUsageSummary {
  cpu_percent: number | null;
  cpu_seconds: number | null;
  rss_bytes: number | null;
  peak_rss_bytes: number | null;
}

/** A metric's last value as the jobs list shows it (what ``jupyter_sched.track`` logged on the first role's replica 0), read from its summary file. Numbers, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (strict JSON). */
export interface IMetricLast {
  key: string;
  last: number | string | null;
  step: number | null;
  best: number | string | null;
  goal: string | null;
}

/** One app, as the jobs list shows it. */
export interface IJobRow {
  handle: string;
  app_id: string;
  name: string;
  label: string;
  scheduler: string;
  session: string;
  state: string;
  running: boolean;
  started: number | null;
  ended: number | null;
  span: number | null;
  seen: number;
  sweep: string | null;
  sweep_label: string | null;
  notebook: string | null;
  reason: string;
  replicas: number;
  replicas_running: number;
  usage: IUsageSummary | null;
  metrics: IMetricLast[] | null;
  kind: 'job';
}

/** A sweep's runs (two or more) as one line, at the place of its first run in the order. */
export interface ISweepRow {
  handle: string;
  sweep: string;
  name: string;
  label: string;
  sweep_label: string;
  scheduler: string;
  session: string;
  state: string;
  running: boolean;
  started: number | null;
  ended: number | null;
  span: number | null;
  seen: number;
  notebook: string | null;
  counts: { [key: string]: number };
  total: number;
  runs_running: number;
  failed_run: string | null;
  runs: IJobRow[];
  more: number;
  kind: 'sweep';
}

/** ``GET jobs``: ``limit`` entries from ``offset``, and what the sidebar shows about them all. */
export interface IJobPage {
  jobs: (IJobRow | ISweepRow)[];
  total: number;
  running: number;
  offset: number;
  limit: number;
  notices: string[];
  sessions: string[];
  schedulers: string[];
  generated: number;
  apps: number;
  listed_in: number;
  sweep: ISweepRow | null;
}

/** ``GET jobs/ended?since=CURSOR``: every job the server saw end after that cursor, oldest first, each once, with its row as the listing that saw it end made it (so a job that started and ended between two polls of the list is here too). */
export interface IEndedPage {
  cursor: string;
  jobs: IJobRow[];
  truncated: boolean;
}

/** One GPU of a replica (``GpuSample.to_json()``). */
export interface IGpuJson {
  index: number;
  name: string;
  utilization_percent: number;
  memory_used_bytes: number;
  memory_total_bytes: number;
}

/** What an ended replica used (``ReplicaStatus.usage``). */
export interface IUsageJson {
  peak_rss_bytes: number | null;
  cpu_seconds: number;
  wall_seconds: number;
  mem_limit_bytes: number | null;
}

/** One replica in a status. */
export interface IReplicaJson {
  id: number;
  state: string;
  hostname: string;
  exit_code: number | null;
  pid: number | null;
  started: number | null;
  finished: number | null;
  num_restarts: number;
  msg: string | null;
  usage: IUsageJson | null;
}

/** A role's replicas in a status. */
export interface IRoleJson {
  role: string;
  replicas: IReplicaJson[];
}

/** ``AppStatus.to_json()``, masked. */
export interface IStatusJson {
  state: string;
  num_restarts: number;
  msg: string | null;
  structured_error_msg: string | null;
  ui_url: string | null;
  roles: IRoleJson[];
}

/** ``UsageSample.to_json()`` and whether the replica still runs. */
export interface IUsageSampleJson {
  role: string;
  replica: number;
  cpu_percent: number;
  cpu_seconds: number;
  rss_bytes: number;
  peak_rss_bytes: number;
  mem_limit_bytes: number | null;
  running: boolean;
  gpus?: IGpuJson[] | null;
}

/** One value of a metric series: its step (None if logged without), UNIX time, and value (a number, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"``). */
export interface IMetricPoint {
  step: number | null;
  t: number;
  value: number | string;
}

/** A metric's summary on one replica (its summary file): count, last, min and max with their steps, goal. */
export interface IMetricStats {
  count: number;
  last: number | string | null;
  last_step: number | null;
  min: number | string | null;
  min_step: number | null;
  max: number | string | null;
  max_step: number | null;
  goal: string | null;
}

/** A replica that has metrics. */
export interface IMetricsReplica {
  role: string;
  replica: number;
}

/** ``GET jobs/<handle>/metrics``: one replica's series (``?role=&k=``, the first role's replica 0 by default), each downsampled to at most ``max_points`` keeping each bucket's min and max; with ``?since=`` only the records after that cursor. */
export interface IJobMetricsAnswer {
  handle: string;
  role: string | null;
  replica: number;
  cursor: string;
  series: { [key: string]: IMetricPoint[] };
  summary: { [key: string]: IMetricStats };
  skipped: number;
  points: number;
  max_points: number;
  replicas: IMetricsReplica[];
  state: string;
}

/** An artifact a run added with TorchX's tracker API (the last one added under its name). */
export interface ITrackerArtifactJson {
  name: string;
  path: string;
  metadata: { [key: string]: unknown } | null;
}

/** What one run id told TorchX's tracker API (``app_run_from_env()``), bounded for a live view (``frontend.jobs.tracked.tracker_json``): metadata values as the job stored them (any JSON), masked. */
export interface ITrackerRunJson {
  run_id: string;
  metadata: { [key: string]: unknown };
  more_metadata: number;
  artifacts: ITrackerArtifactJson[];
  more_artifacts: number;
}

/** ``GET jobs/<handle>``: the job's row with these fields over it. */
export interface IJobDetail extends Omit<IJobRow, 'usage'> {
  status: IStatusJson;
  usage: IUsageSampleJson[];
  tracker: ITrackerRunJson[];
}

/** One line of the jobs list. */
export type IEntry = IJobRow | ISweepRow;
