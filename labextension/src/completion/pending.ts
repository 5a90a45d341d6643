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
