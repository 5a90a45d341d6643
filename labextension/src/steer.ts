/**
 * Steering the live run (issue 50.2; pure: the post is handed in). A message sent while a run
 * works is queued by the server and reaches the model at the run's next step (after the tool
 * call in progress, before its next answer), where the run's `run.message` shows it as a part
 * of the answer. Until then this keeps what was sent from here: waiting for the run's id,
 * queued, not sent (and why), or not delivered (the run ended first). It also holds a message
 * to send as a new run once the live one ends.
 */
import { isObject, ShapeError } from './shapes';
import { isFinished, IRunView } from './run';

/** Where a message sent from here stands. */
export type SteerState = 'sending' | 'queued' | 'delivered' | 'undelivered' | 'failed';

/** A message sent from here to a live run. */
export interface ISteer {
  readonly key: number;
  readonly text: string;
  /** The run it goes to (in a task, the task), '' until the run has its id. */
  runId: string;
  /** The server's id for it, once queued (the id its `run.message` carries). */
  id: string | null;
  state: 'sending' | 'queued' | 'failed';
  error: string | null;
}

/** Posts a message to a run (or a task) and returns the server's id for it. */
export type PostSteer = (run: { runId: string; task: boolean }, text: string) => Promise<string>;

/** The most messages kept here (the oldest go first): what a session's view needs. */
const KEEP = 64;

/** The id of `POST …/messages`'s answer (`{id, run_id, status}`); throws on another shape. */
export function queuedId(body: unknown): string {
  if (!isObject(body) || typeof body.id !== 'string' || !body.id) {
    throw new ShapeError('messages: the answer has no message id');
  }
  return body.id;
}

/** Where `item` stands, as the run's view says: delivered once its `run.message` came. */
export function steerState(item: ISteer, run: IRunView): SteerState {
  if (item.state === 'sending' && isFinished(run)) {
    return 'undelivered'; // the run ended before it had an id to send to
  }
  if (item.state !== 'queued') {
    return item.state;
  }
  if (run.parts.some(p => p.kind === 'message' && p.id === item.id)) {
    return 'delivered';
  }
  return isFinished(run) ? 'undelivered' : 'queued';
}

/** What a message not shown in the answer yet says about itself. */
export function steerNote(state: SteerState, error: string | null): string {
  switch (state) {
    case 'sending':
      return 'sending…';
    case 'queued':
      return 'queued: the agent reads it at its next step';
    case 'undelivered':
      return 'not delivered: the run ended first';
    case 'failed':
      return `not sent: ${error ?? 'the server refused it'}`;
    default:
      return '';
  }
}

/** The messages sent from here to live runs, and the one to send once the live run ends. */
export class Steering {
  constructor(post: PostSteer, changed: () => void) {
    this._post = post;
    this._changed = changed;
  }

  items: ISteer[] = [];
  /** Sent as a new run once the live one ends ("Send as new run"). */
  next: string | null = null;

  /** Send `text` to `run` (the live one); a run without its id yet gets it once it has one. */
  async send(run: IRunView, text: string): Promise<void> {
    const message = text.trim();
    if (!message) {
      return;
    }
    const item: ISteer = {
      key: ++this._keys,
      text: message,
      runId: '',
      id: null,
      state: 'sending',
      error: null
    };
    this.items = [...this.items, item].slice(-KEEP);
    for (const key of this._runs.keys()) {
      if (!this.items.some(i => i.key === key)) {
        this._runs.delete(key); // dropped with the oldest items
      }
    }
    this._runs.set(item.key, run);
    this._changed();
    await this.flush(run);
  }

  /** Post what waits for `run`'s id, now that it may have one (after each of its events). */
  async flush(run: IRunView): Promise<void> {
    const waiting = this.items.filter(
      i => i.state === 'sending' && !i.runId && this._runs.get(i.key) === run
    );
    if (!run.runId || !waiting.length) {
      return;
    }
    for (const item of waiting) {
      item.runId = run.runId;
      this._runs.delete(item.key);
    }
    for (const item of waiting) {
      try {
        item.id = await this._post({ runId: run.runId, task: run.task }, item.text);
        item.state = 'queued';
      } catch (error) {
        item.state = 'failed';
        item.error = (error as Error)?.message ?? String(error);
      }
      this._changed();
    }
  }

  /** The messages sent to `run` that its answer does not show (not delivered, or not yet). */
  pending(run: IRunView): ISteer[] {
    return this.items.filter(
      i =>
        (i.runId ? i.runId === run.runId : this._runs.get(i.key) === run) &&
        steerState(i, run) !== 'delivered'
    );
  }

  /** Keep `text` to send as a new run once the live run ends (one at a time: the latest). */
  later(text: string): void {
    this.next = text.trim() || null;
    this._changed();
  }

  /** The live run's stream ended: the message kept for then is sent as a new run. */
  ended(send: (text: string) => void): void {
    const next = this.next;
    this.next = null;
    if (next) {
      send(next);
    }
  }

  private _post: PostSteer;
  private _changed: () => void;
  private _keys = 0;
  /** Items still waiting for their run's id, by key: the run's view they go to. */
  private _runs = new Map<number, IRunView>();
}
