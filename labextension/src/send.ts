/** What sending a message starts: a chat run, or a task (the role chain), with its choices. */
import { chatBody } from './agents';
import * as api from './api';
import { IRunEvent } from './events';
import { describeError, ResolveRequestError } from './request';
import { IRunView } from './run';

/** What goes with a message besides its text. */
export interface ISendChoices {
  readonly mode: 'chat' | 'task';
  /** The session to continue; null: the server starts one. */
  readonly sessionId: string | null;
  /**
   * The soul (or `agent:NAME`, an external agent), model and notebook chosen ('' or null: the
   * server's default, none).
   */
  readonly soul: string;
  readonly model: string;
  readonly notebook: string | null;
  /** The variables mentioned as `@name`. */
  readonly mentions?: readonly string[];
}

/** Start the run (or task) and read its events to the end. */
export function startRun(
  message: string,
  choices: ISendChoices,
  onEvent: (event: IRunEvent) => void
): Promise<number> {
  const onInvalid = (error: Error) => console.warn('jupyter-resolve: skipped an event:', error);
  const { sessionId, soul, model, notebook, mentions } = choices;
  if (choices.mode === 'task') {
    return api.task(
      {
        goal: message,
        ...(sessionId ? { session_id: sessionId } : {}),
        ...(model ? { model } : {})
      },
      { onEvent, onInvalid }
    );
  }
  return api.chat(chatBody(message, { sessionId, soul, model, notebook, mentions }), {
    onEvent,
    onInvalid
  });
}

/**
 * What a failed send says. A model the server's allowlist no longer has (it changed under the
 * picker) is said in the turn, whose message stays to send again, and the model list is to be
 * loaded again; anything else is the banner's.
 */
export function sendFailure(
  error: unknown,
  run: IRunView,
  what: string
): { banner: string | null; reloadModels: boolean } {
  if (error instanceof ResolveRequestError && error.code === 'model_not_allowed') {
    run.errors.push(`Not sent: ${error.message}`);
    run.reason = run.reason ?? 'error';
    return { banner: null, reloadModels: true };
  }
  return { banner: describeError(error, what), reloadModels: false };
}
