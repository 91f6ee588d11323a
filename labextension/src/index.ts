/**
 * jupyter_sched in JupyterLab (and Notebook 7): the Jobs sidebar, a live main-area view per job,
 * notifications when jobs end, and job outputs that outlive their kernel. Everything reads the server
 * extension's API (jupyter_sched/server), so it works with no kernel at all.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget, Notification } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';
import { Poll } from '@lumino/polling';

import { endedSince, IJobRow, ISweepRow, listJobs } from './api';
import { duration, visible } from './format';
import { frontEnd, JobView } from './jobview';
import { IOutputEnv, JOB_MIME, JobOutput, KernelWatch, RANK, SWEEP_MIME } from './output';
import { JobsSidebar } from './sidebar';

const JOBS_PLUGIN = 'jupyter-sched:jobs';
const OPEN = 'jupyter-sched:open-job';
const SHOW = 'jupyter-sched:show-jobs';
const TRUST = 'notebook:trust';
const HIDDEN_INTERVAL_S = 5;

export const jobsIcon = new LabIcon({
  name: 'jupyter-sched:jobs',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<rect x="3" y="4" width="4" height="4" rx="1"/><rect x="9" y="5" width="12" height="2" rx="1"/>' +
    '<rect x="3" y="10" width="4" height="4" rx="1"/><rect x="9" y="11" width="9" height="2" rx="1"/>' +
    '<rect x="3" y="16" width="4" height="4" rx="1"/><rect x="9" y="17" width="11" height="2" rx="1"/>' +
    '</g></svg>'
});

/** Which ended jobs notify (the `notifyScope` setting). */
export type NotifyScope = 'here' | 'notebooks' | 'all';

// the backends whose jobs run as this user's processes on this machine and keep their records in the
// server's log dir: a terminal here launched them (a shared Docker engine or cluster runs anyone's)
const LOCAL_SCHEDULERS = new Set(['local_cwd', 'local_dir']);
const CURSOR_KEY = 'jupyter-sched:ended-cursor';
// more ends than this in one answer (a browser back after a long while) are told as one notification
const MAX_EACH = 5;

/**
 * Says when a job ends, and how: from what the server saw end (`GET jobs/ended?since=`), not from two
 * snapshots of the list, so a job that starts and ends between two polls notifies too. The cursor is kept
 * in localStorage (per server), so a reload neither repeats nor misses an end, and two tabs of one server
 * take turns rather than both telling it.
 */
class EndNotifier {
  enabled = true;
  scope: NotifyScope = 'here';

  constructor(private readonly open: (handle: string) => void) {}

  private get key(): string {
    return `${CURSOR_KEY}:${ServerConnection.makeSettings().baseUrl}`;
  }

  /** Asks what ended since the kept cursor, keeps the new one, and tells each end in scope. */
  async poll(): Promise<void> {
    const stored = window.localStorage.getItem(this.key);
    let answer = await endedSince(stored);
    const latest = window.localStorage.getItem(this.key);
    if (latest !== stored && latest !== null) {
      // another tab of this server asked meanwhile and told what ended up to its cursor: only what is newer
      answer = await endedSince(latest);
    }
    window.localStorage.setItem(this.key, answer.cursor);
    if (stored === null || !this.enabled) {
      return; // a first visit: nothing before now is news
    }
    const rows = answer.jobs.filter(row => this.inScope(row));
    if (rows.length > MAX_EACH) {
      this.many(rows);
      return;
    }
    for (const row of rows) {
      await this.ended(row);
    }
  }

  /** Whether `row`'s end notifies under the scope setting (see schema/jobs.json's notifyScope). */
  inScope(row: IJobRow): boolean {
    if (this.scope === 'all') {
      return true;
    }
    if (row.notebook !== null) {
      return true;
    }
    return this.scope === 'here' && LOCAL_SCHEDULERS.has(row.scheduler);
  }

  private many(rows: IJobRow[]): void {
    const failed = rows.filter(row => row.state === 'FAILED').length;
    const message = `${rows.length} jobs ended` + (failed ? `, ${failed} of them failed` : '');
    Notification.emit(message, failed ? 'error' : 'info', {
      autoClose: 10000,
      actions: [{ label: 'Show Jobs', caption: 'show the Jobs sidebar', callback: () => this.showJobs() }]
    });
  }

  showJobs: () => void = () => undefined;
  /** Shows the runs of sweep `name` (the Jobs sidebar, that sweep's runs listed). */
  openSweep: (name: string) => void = () => undefined;

  private async ended(row: IJobRow): Promise<void> {
    let message: string;
    let type: Notification.TypeOptions;
    const handle = row.handle;
    if (row.sweep) {
      // a sweep says how it ended once, when its last run has ended; its state, counts and label are the
      // server's (the page of its runs carries the sweep's row)
      let sweep: ISweepRow | null = null;
      try {
        sweep = (await listJobs({ sweep: row.sweep, limit: '1' })).sweep;
      } catch {
        sweep = null; // told as the run it is
      }
      if (sweep && (sweep.running || this.sweepsSaid.has(row.sweep))) {
        return;
      }
      if (sweep) {
        this.sweepsSaid.add(row.sweep);
        const parts = Object.entries(sweep.counts).map(([state, n]) => `${n} ${state}`);
        message = `sweep ${sweep.label} ended: ${parts.join(', ')}`;
        type = sweep.state === 'FAILED' ? 'error' : sweep.state === 'SUCCEEDED' ? 'success' : 'warning';
        // Open shows the run to look at: its one failed run (the server's `failed_run`), else the sweep's runs
        const failed = sweep.failed_run;
        const name = sweep.sweep;
        this.emit(message, type, failed
          ? { caption: `open ${failed}`, go: () => this.open(failed) }
          : { caption: `show the runs of sweep ${sweep.label}`, go: () => this.openSweep(name) });
        return;
      }
    }
    const took = row.span !== null ? ` in ${duration(row.span)}` : '';
    message = row.reason || `${row.name} ${row.state}`;
    if (row.state === 'SUCCEEDED') {
      message += took;
    }
    type = row.state === 'SUCCEEDED' ? 'success' : row.state === 'FAILED' ? 'error' : 'warning';
    this.emit(message, type, { caption: `open ${handle}`, go: () => this.open(handle) });
  }

  private emit(message: string, type: Notification.TypeOptions, open: { caption: string; go: () => void }): void {
    // a job's name and reason are the job's words: their control and bidirectional characters show escaped
    Notification.emit(visible(message), type, {
      autoClose: 10000,
      actions: [{ label: 'Open', caption: visible(open.caption), callback: open.go }]
    });
  }

  private sweepsSaid = new Set<string>();
}

/** Names the app in the records it writes; Notebook 7 opens a job's view below the page (see `openJob`). */
function describeFrontEnd(app: JupyterFrontEnd): void {
  frontEnd.name = app.name;
  if (app.name === 'Jupyter Notebook') {
    frontEnd.openLabel = 'Open below';
    frontEnd.trustWhere = 'File › Trust Notebook (or Not Trusted at the top right)';
  }
}

const jobs: JupyterFrontEndPlugin<void> = {
  id: JOBS_PLUGIN,
  description: 'The Jobs sidebar, job views and end-of-job notifications of jupyter_sched.',
  autoStart: true,
  optional: [INotebookTracker, ISettingRegistry, ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker | null,
    settingRegistry: ISettingRegistry | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    describeFrontEnd(app);
    const views = new Map<string, MainAreaWidget<JobView>>();
    const openJob = (handle: string) => {
      let widget = views.get(handle);
      if (!widget || widget.isDisposed) {
        const content = new JobView(handle);
        widget = new MainAreaWidget({ content });
        widget.id = `jupyter-sched-job-${views.size}-${Date.now()}`;
        widget.addClass('jsl-job-panel');
        widget.title.label = handle.slice(handle.lastIndexOf('/') + 1);
        widget.title.caption = handle;
        widget.title.icon = jobsIcon;
        widget.title.closable = true;
        views.set(handle, widget);
        widget.disposed.connect(() => views.delete(handle));
        app.shell.add(widget, 'main');
        if (!widget.parent) {
          // Notebook 7: a page's main area holds its one document and refuses more; the panel below it
          // (the "down" area) takes the job view instead
          app.shell.add(widget, 'down');
        }
      }
      app.shell.activateById(widget.id);
    };

    let interval = 1;
    const sidebar = new JobsSidebar({
      open: openJob,
      currentNotebook: () => tracker?.currentWidget?.context.path ?? null,
      changed: () => void poll.refresh()
    });
    sidebar.title.icon = jobsIcon;
    const notifier = new EndNotifier(openJob);
    notifier.showJobs = () => app.shell.activateById(sidebar.id);
    notifier.openSweep = name => {
      sidebar.showSweep(name);
      app.shell.activateById(sidebar.id);
    };
    const poll = new Poll({
      name: 'jupyter-sched:jobs',
      factory: async () => {
        try {
          const [list] = await Promise.all([
            sidebar.isVisible ? listJobs(sidebar.query()) : Promise.resolve(null),
            notifier.poll()
          ]);
          if (list) {
            sidebar.setList(list);
          }
        } catch (error) {
          sidebar.showError(`cannot list jobs: ${error instanceof Error ? error.message : error}`);
          throw error;
        }
      },
      frequency: { interval: 1000, backoff: true, max: 30000 },
      standby: 'never'
    });
    const pace = () => {
      const seconds = sidebar.isVisible ? interval : Math.max(interval, HIDDEN_INTERVAL_S);
      poll.frequency = { interval: seconds * 1000, backoff: true, max: 30000 };
    };
    app.shell.add(sidebar, 'left', { rank: 650 });
    restorer?.add(sidebar, 'jupyter-sched-jobs');
    app.restored.then(() => {
      pace();
      void poll.refresh();
    });
    // the list follows the sidebar: fresh the moment it is shown, slow while it is hidden
    const observer = new MutationObserver(() => {
      pace();
      if (sidebar.isVisible) {
        void poll.refresh();
      }
    });
    observer.observe(sidebar.node, { attributes: true, attributeFilter: ['class'] });
    tracker?.currentChanged.connect(() => sidebar.notebookChanged());

    app.commands.addCommand(OPEN, {
      label: 'Open Job',
      caption: 'Open a job by its handle (scheduler://session/app_id)',
      execute: args => openJob(String(args.handle))
    });
    app.commands.addCommand(SHOW, {
      label: 'Show Jobs',
      caption: 'Show the Jobs sidebar',
      execute: () => app.shell.activateById(sidebar.id)
    });
    palette?.addItem({ command: SHOW, category: 'Jobs' });

    if (settingRegistry) {
      void settingRegistry.load(JOBS_PLUGIN).then(settings => {
        const apply = () => {
          notifier.enabled = settings.get('notifyOnEnd').composite as boolean;
          notifier.scope = settings.get('notifyScope').composite as NotifyScope;
          interval = Math.max(0.5, settings.get('refreshInterval').composite as number);
          pace();
        };
        apply();
        settings.changed.connect(apply);
      });
    }
  }
};

const outputs: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-sched:outputs',
  description: 'Job outputs that outlive their kernel: the live pane, else the job from the server, else the record.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, rendermime: IRenderMimeRegistry, tracker: INotebookTracker | null) => {
    describeFrontEnd(app);
    const open = (handle: string) => void app.commands.execute(OPEN, { handle });
    // a job's output and a sweep's: one renderer, told which by the mime type it renders
    const factory = (env: IOutputEnv, mime: string) => ({
      safe: true,
      mimeTypes: [mime],
      defaultRank: RANK,
      createRenderer: (options: any) => new JobOutput(options, env)
    });
    // outside notebooks (an output view, a console): the server's view or the record
    for (const mime of [JOB_MIME, SWEEP_MIME]) {
      rendermime.addFactory(factory({ rendermime: null, watch: null, open, trust: null }, mime), RANK);
    }
    // in a notebook: also the live pane while the kernel that drew it runs
    tracker?.widgetAdded.connect((_, panel) => {
      const watch = new KernelWatch(panel);
      const registry = panel.content.rendermime;
      // JupyterLab's trust command shows its confirmation dialog for this notebook (not the current one)
      const trust = () => void app.commands.execute(TRUST, { widgetId: panel.id });
      for (const mime of [JOB_MIME, SWEEP_MIME]) {
        registry.addFactory(factory({ rendermime: registry, watch, open, trust }, mime), RANK);
      }
    });
  }
};

export default [jobs, outputs];
