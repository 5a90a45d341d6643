/**
 * Promotion as a person does it: a title asked for every time (a notebook output, a tool
 * card's result), then `POST resolve/api/artifacts`; a toast says what was kept.
 */
import { InputDialog, Notification } from '@jupyterlab/apputils';
import * as api from './api';
import { describeError } from './request';
import { IArtifact } from './validate';

/** Ask for the artifact's title; null when the person cancelled. */
export async function askTitle(suggested: string): Promise<string | null> {
  const answer = await InputDialog.getText({
    title: 'Promote to an artifact',
    label: 'Title',
    text: suggested,
    placeholder: 'What this is, e.g. "BMI by age, cohort A"'
  });
  if (!answer.button.accept) {
    return null;
  }
  return answer.value?.trim() || suggested;
}

/**
 * Promote the result of call `callId` of run `runId` (what its tool card shows), titled by the
 * person. Resolves with the artifact, or null when cancelled or refused (a toast says why).
 */
export async function promoteToolResult(
  runId: string,
  callId: string,
  suggested: string
): Promise<IArtifact | null> {
  const title = await askTitle(suggested);
  if (title === null) {
    return null;
  }
  try {
    const artifact = await api.promote({ run_id: runId, call_id: callId, title });
    Notification.success(`Promoted: ${artifact.title}`, { autoClose: 5000 });
    return artifact;
  } catch (error) {
    Notification.error(describeError(error, 'Promote'));
    return null;
  }
}
