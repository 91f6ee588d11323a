/**
 * Cancelling a job from the Jobs sidebar or a job's view: the same confirm, the same button states.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';

import { cancelJob } from './api';

/** What came of asking: the user kept the job, the cancel was sent, or sending it failed (why). */
export type CancelOutcome = { kind: 'kept' } | { kind: 'requested' } | { kind: 'failed'; message: string };

/**
 * Asks the user to confirm, then asks the server to cancel `handle`. `button` is disabled and says
 * "Cancelling…" while the request is out; the caller restores it on failure.
 */
export async function askToCancel(name: string, handle: string, button: HTMLButtonElement): Promise<CancelOutcome> {
  const result = await showDialog({
    title: 'Cancel job?',
    body: `Cancel ${name} (${handle})? Its replicas are stopped.`,
    buttons: [Dialog.cancelButton({ label: 'Keep running' }), Dialog.warnButton({ label: 'Cancel job' })]
  });
  if (!result.button.accept) {
    return { kind: 'kept' };
  }
  button.disabled = true;
  button.textContent = 'Cancelling…';
  try {
    await cancelJob(handle);
    return { kind: 'requested' };
  } catch (error) {
    return { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}
