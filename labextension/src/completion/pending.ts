/**
 * One completion in flight (pure): the text streamed so far, whether it is done or failed, and
 * the items JupyterLab's inline completer is given as it grows.
 */

/** The subset of JupyterLab's IInlineCompletionItem this module makes. */
export interface IPendingItem {
  insertText: string;
  token: string;
  isIncomplete: boolean;
  error?: { message: string };
}

export class PendingCompletion {
  text = '';
  done = false;
  error: string | null = null;
  readonly controller = new AbortController();
  /** Counts changes, so a change made while nobody waited is not missed. */
  version = 0;
  private _wake: (() => void) | null = null;

  append(delta: string): void {
    this.text += delta;
    this._notify();
  }

  finish(): void {
    this.done = true;
    this._notify();
  }

  fail(message: string): void {
    this.error = message;
    this._notify();
  }

  /** Resolves once there is a change after `seen` (a delta, the end, an error). */
  changed(seen: number): Promise<void> {
    if (this.version > seen) {
      return Promise.resolve();
    }
    return new Promise(resolve => {
      this._wake = resolve;
    });
  }

  /** The item as it stands: incomplete while the model writes, with the error once failed. */
  item(token: string): IPendingItem {
    if (this.error !== null) {
      return { insertText: this.text, token, isIncomplete: false, error: { message: this.error } };
    }
    return { insertText: this.text, token, isIncomplete: !this.done };
  }

  /** The item after each change from now on, to the last (complete or failed). */
  async *updates(token: string): AsyncGenerator<IPendingItem> {
    let seen = this.version;
    while (!this.done && this.error === null) {
      await this.changed(seen);
      seen = this.version;
      yield this.item(token);
    }
  }

  private _notify(): void {
    this.version++;
    const wake = this._wake;
    this._wake = null;
    wake?.();
  }
}

/** What the stream says as it goes. */
export interface ICompletionCallbacks {
  onDelta(text: string): void;
  onDone(info: { model?: string; ms?: number }): void;
}

/** A completion stream that broke or carried an error frame. */
export class CompletionStreamError extends Error {
  constructor(
    message: string,
    readonly code: string
  ) {
    super(message);
    this.name = 'CompletionStreamError';
  }
}

function parseData(data: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    throw new CompletionStreamError('a completion frame is not JSON', 'bad_frame');
  }
}

/** Dispatch one SSE frame of the completion stream; true once it is done. */
export function onCompletionFrame(
  event: string,
  data: string,
  callbacks: ICompletionCallbacks
): boolean {
  const body = parseData(data);
  if (event === 'completion.delta') {
    callbacks.onDelta(typeof body.text === 'string' ? body.text : '');
    return false;
  }
  if (event === 'completion.done') {
    callbacks.onDone({
      model: typeof body.model === 'string' ? body.model : undefined,
      ms: typeof body.ms === 'number' ? body.ms : undefined
    });
    return true;
  }
  if (event === 'error' || event === 'completion.error') {
    const message = typeof body.message === 'string' ? body.message : 'the completion failed';
    throw new CompletionStreamError(message, String(body.code ?? 'completion_error'));
  }
  return false; // a frame type added later: ignored
}
