/** What sending a message starts: a chat run, or a task (the role chain), with its choices. */
import { chatBody } from './agents';
import * as api from './api';
import { IRunEvent } from './events';

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
