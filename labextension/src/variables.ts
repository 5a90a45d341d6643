/** The bound notebook's kernel variables, for `@name`: loaded when asked, one load at a time. */
import * as api from './api';
import { mentionedNames, unknownMentions } from './mentions';
import { describeError, ResolveRequestError } from './request';
import { IVariable } from './validate';

/** The variables a person can mention, and why there are none when there are none. */
export class NotebookVariables {
  /** `notebook` says which notebook the chat is bound to now; `changed` re-renders. */
  constructor(
    private readonly _notebook: () => string | null,
    private readonly _changed: () => void
  ) {}

  /** The kernel's variables (null: not loaded). */
  list: IVariable[] | null = null;
  /** Why there are no variables to mention (no notebook, no kernel, an error). */
  note: string | null = null;

  /** Fetch the bound notebook's variables; a note says why there are none. */
  load(): Promise<void> {
    // one request at a time: typing `@` asks, and so may a send right after
    this._loading ??= this._load().finally(() => (this._loading = null));
    return this._loading;
  }

  /** The `@names` of `text` that are none of the kernel's variables as they are now. */
  async unknownIn(text: string): Promise<string[]> {
    if (!unknownMentions(text, []).length) {
      return []; // no @name at all: nothing to ask the kernel
    }
    await this.load();
    return unknownMentions(text, (this.list ?? []).map(v => v.name));
  }

  /** The kernel's variables `text` names as `@name` (loaded first when not yet). */
  async mentionedIn(text: string): Promise<string[]> {
    if (this.list === null) {
      await this.load();
    }
    return mentionedNames(text, (this.list ?? []).map(v => v.name));
  }

  private async _load(): Promise<void> {
    const notebook = this._notebook();
    if (!notebook) {
      this.list = [];
      this.note = 'Use “Ask Resolve about this notebook” to mention its variables.';
      this._changed();
      return;
    }
    try {
      const answer = await api.variables(notebook);
      if (this._notebook() !== notebook) {
        return; // rebound meanwhile
      }
      this.list = answer.variables;
      this.note = answer.kernel
        ? answer.variables.length
          ? null
          : `No variables in ${notebook}'s kernel yet.`
        : `${notebook} has no running kernel.`;
    } catch (error) {
      this.list = [];
      this.note =
        error instanceof ResolveRequestError && error.notAvailable
          ? 'This server cannot list notebook variables yet.'
          : describeError(error, `The variables of ${notebook}`);
    }
    this._changed();
  }

  private _loading: Promise<void> | null = null;
}
