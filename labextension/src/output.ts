/**
 * A job cell's output that outlives its kernel.
 *
 * The kernel side puts three things in a job's output: the widget view (the live panes), the record
 * (`text/html` and `text/plain`: what the panes showed, as of when), and
 * `application/vnd.jupyter-sched.job+json` (the handle, the state, and whether the record is final).
 * This renderer claims that mime type with a rank before the widget renderer's, and decides:
 *
 * 1. the widget, when the notebook's current kernel holds its model (the model id came with a display
 *    message of this kernel, or the kernel's `comm_info` lists it), and the output is trusted;
 * 2. else the saved record, when it is final (nothing can change any more);
 * 3. else, when the output is not trusted (a notebook someone else wrote, not yet trusted here), the saved
 *    record with a line that says why and how to trust the notebook: nothing is asked of the Jupyter
 *    server (no detail, no log stream, no Cancel button) for a handle the file names;
 * 4. else the job as the Jupyter server knows it now (live while it runs; its final state once ended),
 *    and the saved record only if the server does not know the handle.
 *
 * When the kernel that drew a live pane restarts, dies or is replaced, the pane is swapped for (4) with
 * a line that says so: never a frozen "RUNNING … following", never "model not found".
 *
 * A sweep's output is decided the same way, from `application/vnd.jupyter-sched.sweep+json` (the sweep's
 * name, state, run count, whether the record is final): its live table while the kernel that drew it holds
 * it (after the end too: the ended table keeps its controls), else the saved record if final or untrusted,
 * else the sweep as the Jupyter server knows it (sweepview.ts), written into the notebook as its final
 * record once its runs have ended.
 *
 * Trust is JupyterLab's (and Notebook 7's): the server marks a notebook's cells trusted when its signature
 * is known (it signs what the user ran or trusted), and an output's `model.trusted` follows its cell. When
 * the user trusts the notebook (the `notebook:trust` command, after its confirmation dialog), each output
 * area re-sets its items with `trusted: true`; JupyterLab hands the new model to this same renderer
 * (`renderModel` again, the preferred mime type being unchanged), which then goes live.
 *
 * Everything the file says reaches the page as text (`textContent`) or through JupyterLab's own HTML
 * renderer, which sanitizes an untrusted output's `text/html`.
 */
import { NotebookPanel } from '@jupyterlab/notebook';
import { RenderedHTML } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Signal } from '@lumino/signaling';
import { Panel, Widget } from '@lumino/widgets';

import { getJob, IJobDetail, logSnapshot } from './api';
import { clock, el } from './format';
import { frontEnd, ILogTail, JobView, recordOf } from './jobview';
import { ISweepInfo, SweepServerView } from './sweepview';

export const JOB_MIME = 'application/vnd.jupyter-sched.job+json';
export const SWEEP_MIME = 'application/vnd.jupyter-sched.sweep+json';
export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
/** Before the widget renderer (-10), which would otherwise win and fail without its model. */
export const RANK = -20;
const COMM_INFO_MS = 1500;
/** How long a kernel that is not busy (starting, idle) has to answer: it has nothing else to do. */
const COMM_INFO_IDLE_MS = 10000;
const SESSION_WAIT_MS = 5000;
const END_POLL_MS = 2000;
const KERNEL_GRACE_MS = 3000;

function sleep(ms: number): Promise<void> {
  return new Promise(resolve => window.setTimeout(resolve, ms));
}

export interface IJobInfo {
  handle: string;
  name: string;
  state: string;
  final: boolean;
  as_of: number | null;
}

/** What one notebook's kernel has drawn, and whether that kernel is still the one running. */
export class KernelWatch {
  /** Bumped each time the kernel restarts, dies or is replaced. */
  generation = 0;
  why = '';
  readonly lost = new Signal<KernelWatch, string>(this);

  constructor(readonly panel: NotebookPanel) {
    const session = panel.sessionContext;
    session.iopubMessage.connect((_, msg) => {
      const type = msg.header.msg_type;
      if (type === 'display_data' || type === 'execute_result' || type === 'update_display_data') {
        const view = ((msg.content as any).data || {})[WIDGET_MIME];
        if (view && view.model_id) {
          this.drawn.add(view.model_id);
        }
      }
    });
    session.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting') {
        this.forget('restarted');
      } else if (status === 'dead') {
        this.forget('is gone (it was shut down or died)');
      }
    });
    session.kernelChanged.connect((_, change) => {
      if (change.oldValue) {
        this.forget(change.newValue ? 'was replaced' : 'was shut down');
      }
    });
  }

  /**
   * Whether the current kernel holds widget model `id`. A busy kernel that does not answer in time counts
   * as holding it (most likely drawing it right now) unless `strict`; one that is not busy (a kernel just
   * started for a reopened notebook, which holds no model) is waited for longer, and its silence is a no.
   */
  async holds(id: string, strict = false): Promise<boolean> {
    await new Promise(resolve => window.setTimeout(resolve, 0)); // the display message's own signal first
    if (this.drawn.has(id)) {
      return true;
    }
    const session = this.panel.sessionContext;
    if (!session.isReady) {
      // a notebook just opened: its session may be about to connect to a kernel that is still running
      await Promise.race([session.ready, new Promise(resolve => window.setTimeout(resolve, SESSION_WAIT_MS))]);
    }
    const kernel = session.session?.kernel;
    if (!kernel || kernel.status === 'dead') {
      return false;
    }
    const generation = this.generation;
    const reply = kernel
      .requestCommInfo({ target_name: 'jupyter.widget' })
      .then(msg => (msg.content.status === 'ok' ? id in msg.content.comms : false))
      .catch(() => false);
    const busy = kernel.status === 'busy';
    const wait = busy ? COMM_INFO_MS : COMM_INFO_IDLE_MS;
    const late = new Promise<null>(resolve => window.setTimeout(() => resolve(null), wait));
    const answer = await Promise.race([reply, late]);
    // no answer in time from a busy kernel: most likely drawing this output right now
    const held = answer === null ? busy && !strict : answer;
    return generation === this.generation && held;
  }

  private forget(why: string): void {
    this.drawn.clear();
    this.generation++;
    this.why = why;
    this.lost.emit(why);
  }

  private drawn = new Set<string>();
}

export interface IOutputEnv {
  rendermime: IRenderMimeRegistry | null;
  watch: KernelWatch | null;
  open: (handle: string) => void;
  /** Asks the user to trust the output's notebook (JupyterLab's own dialog); null outside a notebook. */
  trust: (() => void) | null;
}

export class JobOutput extends Panel implements IRenderMime.IRenderer {
  constructor(
    private readonly options: IRenderMime.IRendererOptions,
    private readonly env: IOutputEnv
  ) {
    super();
    this.addClass('jsl-output');
    env.watch?.lost.connect(this.onKernelLost, this);
  }

  dispose(): void {
    this.env.watch?.lost.disconnect(this.onKernelLost, this);
    super.dispose();
  }

  private sweepFinal(model: IRenderMime.IMimeModel): boolean {
    const sweep = model.data[SWEEP_MIME] as unknown as ISweepInfo | undefined;
    return !!sweep && sweep.final;
  }

  /** Whether this output is a sweep's (else a job's). */
  private get isSweep(): boolean {
    return this.options.mimeType === SWEEP_MIME;
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const render = ++this.renders;
    this.model = model;
    const info = model.data[JOB_MIME] as unknown as IJobInfo;
    const view = model.data[WIDGET_MIME] as { model_id?: string } | undefined;
    if (this.isSweep) {
      const sweep = model.data[SWEEP_MIME] as unknown as ISweepInfo | undefined;
      this.node.dataset.sweep = sweep && sweep.sweep ? sweep.sweep : '';
    } else {
      this.node.dataset.handle = info && info.handle ? info.handle : '';
    }
    const { rendermime, watch } = this.env;
    // an ended sweep's display keeps its table's controls (sort, a run's panes) while its kernel holds them
    const live = this.isSweep || !info.final;
    if (view && view.model_id && rendermime && watch && model.trusted && live) {
      if (this.live && this.liveId === view.model_id && !this.live.isDisposed) {
        // the widget shown is this one (an ended sweep's update keeps its table): it updates itself, and
        // drawing it again would replace the table under the user's pointer
        return;
      }
      // an ended sweep's table is nobody's drawing in progress: only a kernel that says it holds it keeps it
      const holds = await watch.holds(view.model_id, this.isSweep && this.sweepFinal(model));
      if (render !== this.renders) {
        return;
      }
      if (holds && rendermime.getFactory(WIDGET_MIME)) {
        const pane = rendermime.createRenderer(WIDGET_MIME);
        this.display(pane);
        this.live = pane;
        this.liveId = view.model_id;
        await pane.renderModel(model);
        if (render === this.renders && pane instanceof Panel && pane.widgets.length === 0 && !pane.isDisposed) {
          this.fallback(model, info, ''); // the widget could not be drawn after all
          return;
        }
        if (!this.isSweep) {
          void this.watchEnd(model, info, render);
        }
        return;
      }
    }
    this.fallback(model, info, '');
  }

  /**
   * A live pane's kernel replaces its output by the final record when the job ends, but only in a page
   * that saw the output displayed (a reopened or reloaded page does not know its display id). So: when
   * the job has ended and, a moment later, this output still holds the launch-time record, JupyterLab
   * writes the final record itself, so a save keeps the final state.
   */
  private async watchEnd(model: IRenderMime.IMimeModel, info: IJobInfo, render: number): Promise<void> {
    const current = () => render === this.renders && !this.isDisposed;
    for (;;) {
      await sleep(END_POLL_MS);
      if (!current()) {
        return;
      }
      let detail: IJobDetail;
      try {
        detail = await getJob(info.handle);
      } catch {
        continue; // the server does not know it (yet), or did not answer: the kernel's record stands
      }
      if (detail.running) {
        continue;
      }
      await sleep(KERNEL_GRACE_MS); // the kernel's own update, when this page can receive it
      const now = model.data[JOB_MIME] as unknown as IJobInfo | undefined;
      if (!current() || !now || now.final) {
        return;
      }
      const replicas = detail.status.roles.flatMap(r => r.replicas.map(rep => ({ role: r.role, rep })));
      const pick = replicas.find(({ rep }) => rep.state === 'FAILED') || replicas[0];
      let tail: ILogTail = { lines: [], total: 0, replica: '' };
      if (pick) {
        try {
          const snap = await logSnapshot(info.handle, pick.role, pick.rep.id, 40);
          tail = { lines: snap.html, total: snap.total, replica: `${pick.role}/${pick.rep.id}` };
        } catch {
          // a record without its log tail still says how the job ended
        }
      }
      if (current()) {
        const record = recordOf(detail, tail, '');
        this.writeFinal(model, info, detail.state, record);
      }
      return;
    }
  }

  private onKernelLost(_: KernelWatch, why: string): void {
    if (!this.live || !this.model) {
      return;
    }
    const info = this.model.data[JOB_MIME] as unknown as IJobInfo;
    this.renders++;
    const what = this.isSweep ? 'table' : 'pane';
    this.fallback(this.model, info, `The kernel that drew this ${what} ${why}`);
  }

  /**
   * The saved record if final, else the server's view of the job (the record if it does not know it).
   * `lost`: why the pane's kernel is gone, when it went while this output showed it.
   */
  private fallback(model: IRenderMime.IMimeModel, info: IJobInfo, lost: string): void {
    this.live = null;
    if (this.isSweep) {
      this.sweepFallback(model, model.data[SWEEP_MIME] as unknown as ISweepInfo | undefined, lost);
      return;
    }
    if (!info || !info.handle || info.final) {
      void this.showRecord(model, '');
      return;
    }
    if (!model.trusted) {
      this.showUntrusted(model, info);
      return;
    }
    const saved = `saved ${info.state}${info.as_of ? ` as of ${clock(info.as_of)}` : ''}`;
    const job = new JobView(info.handle, {
      compact: true,
      settled: view => this.keepFinal(model, info, view),
      note: lost
        ? `${lost}; the job as the Jupyter server knows it:`
        : `Live from the Jupyter server (this output was ${saved}; its pane's kernel is gone).`,
      recordNote: lost ? `${lost}.` : `This output was ${saved}; its pane's kernel was gone.`,
      open: this.env.open,
      missing: error => {
        void this.showRecord(
          model,
          `The Jupyter server does not know ${info.handle} (${error.message}); as saved (${saved}):`
        );
      }
    });
    this.display(job);
  }

  /** A sweep's `fallback`: the saved table if final (or untrusted), else the sweep as the server knows it. */
  private sweepFallback(model: IRenderMime.IMimeModel, info: ISweepInfo | undefined, lost: string): void {
    if (!info || !info.sweep || info.final) {
      void this.showRecord(model, '');
      return;
    }
    if (!model.trusted) {
      this.showUntrusted(model, { handle: info.sweep, name: info.label, state: info.state, final: false,
                                  as_of: info.as_of }, 'sweep');  // prettier-ignore
      return;
    }
    const saved = `saved ${info.state}${info.as_of ? ` as of ${clock(info.as_of)}` : ''}`;
    const savedRecord = {
      html: String(model.data['text/html'] ?? ''),
      text: String(model.data['text/plain'] ?? '')
    };
    const view = new SweepServerView({
      info,
      note: lost
        ? `${lost}; the sweep as the Jupyter server knows it:`
        : `Live from the Jupyter server (this output was ${saved}; the kernel that drew its table is gone).`,
      recordNote: lost ? `${lost}.` : `This output was ${saved}; the kernel that drew its table was gone.`,
      open: this.env.open,
      missing: why => {
        void this.showRecord(model, `${why[0].toUpperCase()}${why.slice(1)}; as saved (${saved}):`);
      },
      settled: settledView => {
        const record = settledView.record(savedRecord);
        if (!record || !settledView.sweep || model !== this.model) {
          return;
        }
        const final: ISweepInfo = { ...info, state: settledView.sweep.state, final: true, as_of: null };
        model.setData({
          data: { [SWEEP_MIME]: final as any, 'text/html': record.html, 'text/plain': record.text },
          metadata: model.metadata
        });
      }
    });
    this.display(view);
  }

  /**
   * Once the job has ended, the output in the notebook becomes what the user saw: its final record (no
   * widget), so a save keeps the final state, not the launch-time "RUNNING".
   */
  private keepFinal(model: IRenderMime.IMimeModel, info: IJobInfo, view: JobView): void {
    const record = view.record();
    if (!record || !view.detail || model !== this.model) {
      return;
    }
    this.writeFinal(model, info, view.detail.state, record);
  }

  private writeFinal(model: IRenderMime.IMimeModel, info: IJobInfo, state: string,
                     record: { html: string; text: string }): void {
    const final: IJobInfo = { ...info, state, final: true, as_of: null };
    model.setData({
      data: { [JOB_MIME]: final as any, 'text/html': record.html, 'text/plain': record.text },
      metadata: model.metadata
    });
  }

  /**
   * An untrusted output names a handle nobody here chose to follow: a notebook from elsewhere could make
   * every page that opens it ask the server about (and offer to cancel) any job it names. It shows its
   * saved record, and says how to follow the job live: trust the notebook, as for its scripts.
   */
  private showUntrusted(model: IRenderMime.IMimeModel, info: IJobInfo, what = 'job'): void {
    const { trust } = this.env;
    const when = typeof info.as_of === 'number' && isFinite(info.as_of) ? ` as of ${clock(info.as_of)}` : '';
    const where = `${trust ? 'the button below, or ' : ''}${frontEnd.trustWhere}`;
    const hint = el('div', 'jsl-untrusted');
    hint.appendChild(
      el(
        'div',
        'jsl-untrusted-text',
        `This notebook is not trusted: below is the ${what} as it was saved (${info.state}${when}), not live ` +
          `from the Jupyter server. To follow it live, trust the notebook: ${where}.`
      )
    );
    if (trust) {
      const buttons = el('div', 'jsl-buttons');
      const button = el('button', 'jp-Button jp-mod-styled jsl-trust', 'Trust Notebook…');
      button.title = `${frontEnd.name} asks you to confirm: a trusted notebook's outputs may run code`;
      button.onclick = () => trust();
      buttons.appendChild(button);
      hint.appendChild(buttons);
    }
    void this.showRecord(model, hint);
  }

  private async showRecord(model: IRenderMime.IMimeModel, note: string | HTMLElement): Promise<void> {
    const html = new RenderedHTML({ ...this.options, mimeType: 'text/html' });
    const box = new Panel();
    box.addClass('jsl-record-box');
    if (note) {
      const line = new Widget({ node: typeof note === 'string' ? el('div', 'jsl-note', note) : note });
      box.addWidget(line);
    }
    box.addWidget(html);
    this.display(box);
    if (model.data['text/html']) {
      await html.renderModel(model);
    } else {
      html.node.appendChild(el('pre', '', String(model.data['text/plain'] ?? '')));
    }
  }

  private display(widget: Widget): void {
    for (const child of this.widgets.slice()) {
      child.dispose();
    }
    this.addWidget(widget);
  }

  private renders = 0;
  private model: IRenderMime.IMimeModel | null = null;
  private live: IRenderMime.IRenderer | null = null;
  private liveId = '';
}
