/**
 * What the panel remembers across reloads: the sessions started in this workspace (with what
 * was asked), the session shown, and the live run to reattach to. It lives in a small key-value
 * store — JupyterLab's `IStateDB` in the app, an in-memory one in tests — and is checked when
 * read back, since a workspace file may hold an older shape (pure: no I/O, no DOM).
 */
import type { ReadonlyPartialJSONValue } from '@lumino/coreutils';
import { emptyRun, IRunView, isFinished } from './run';

/** The store behind the panel's state; `IStateDB` is one. */
export interface IStateStore {
  /** The value saved under `id`, or undefined. */
  fetch(id: string): Promise<ReadonlyPartialJSONValue | undefined>;
  /** Save `value` under `id`. */
  save(id: string, value: ReadonlyPartialJSONValue): Promise<void>;
  /** Forget `id`. */
  remove(id: string): Promise<void>;
}

/**
 * A store read and written at once that lasts as long as the browser tab (`sessionStorage` is
 * one): JupyterLab saves the workspace a moment after its last change, so a reload just after a
 * change would lose it from the workspace; the tab keeps it.
 */
export interface ITabStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The store's keys. */
export namespace StateKeys {
  export const sessions = 'jupyter-resolve:sessions';
  export const current = 'jupyter-resolve:current-session';
  export const live = 'jupyter-resolve:live';
  /** The notebook the chat is bound to ("Ask Resolve about this notebook"). */
  export const notebook = 'jupyter-resolve:notebook';
  /** The model picked in the panel (absent: the server's default). */
  export const model = 'jupyter-resolve:model';
  export const all = [sessions, current, live, notebook, model];
}

/** A session started here: its title and what was asked in each of its runs. */
export interface IStoredSession {
  readonly id: string;
  readonly title: string;
  /** Epoch milliseconds. */
  readonly startedAt: number;
  /** Run (or task) id → the prompt sent from here. */
  readonly prompts: { readonly [runId: string]: string };
}

/** Sessions by id. */
export type StoredSessions = { readonly [id: string]: IStoredSession };

/** The live run, cached as its events arrive, to resume after a reload. */
export interface IStoredLive {
  readonly sessionId: string;
  readonly runId: string;
  /** What was asked. */
  readonly user: string;
  /** The run folded up to `run.lastEventId`; null when too large to keep (replay from start). */
  readonly run: IRunView | null;
}

/** The largest run view kept for a reattach, in JSON characters (the workspace is saved whole). */
export const LIVE_CAP = 256_000;

type Loose = { [key: string]: unknown };

function isObject(value: unknown): value is Loose {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** The sessions read back; entries of another shape are dropped. */
export function restoreSessions(raw: unknown): StoredSessions {
  const sessions: { [id: string]: IStoredSession } = {};
  if (!isObject(raw)) {
    return sessions;
  }
  for (const [id, s] of Object.entries(raw)) {
    if (!isObject(s) || s.id !== id || typeof s.title !== 'string') {
      continue;
    }
    const prompts: { [runId: string]: string } = {};
    for (const [runId, prompt] of Object.entries(isObject(s.prompts) ? s.prompts : {})) {
      if (typeof prompt === 'string') {
        prompts[runId] = prompt;
      }
    }
    const startedAt = typeof s.startedAt === 'number' ? s.startedAt : 0;
    sessions[id] = { id, title: s.title, startedAt, prompts };
  }
  return sessions;
}

/** A cached run view read back, or null unless it has the fields the panel resumes from. */
export function restoreRun(raw: unknown): IRunView | null {
  if (
    !isObject(raw) ||
    typeof raw.runId !== 'string' ||
    !raw.runId ||
    typeof raw.sessionId !== 'string' ||
    typeof raw.lastEventId !== 'number' ||
    !Number.isInteger(raw.lastEventId) ||
    raw.lastEventId < 0 ||
    !Array.isArray(raw.parts) ||
    !isObject(raw.tools) ||
    !Array.isArray(raw.errors) ||
    !Array.isArray(raw.steps) ||
    typeof raw.startedAt !== 'number' ||
    raw.endedAt !== null ||
    typeof raw.task !== 'boolean'
  ) {
    return null;
  }
  // a view cached by an older panel lacks the newer fields: they start empty
  const fresh = emptyRun(raw.startedAt, raw.task);
  const filled: { [key: string]: unknown } = { ...raw };
  for (const [key, value] of Object.entries(fresh)) {
    if (!(key in filled)) {
      filled[key] = value;
    }
  }
  return filled as unknown as IRunView;
}

/** The live run read back, or null; a run view of another shape is dropped (replay from start). */
export function restoreLive(raw: unknown): IStoredLive | null {
  if (
    !isObject(raw) ||
    typeof raw.sessionId !== 'string' ||
    !raw.sessionId ||
    typeof raw.runId !== 'string' ||
    !raw.runId ||
    typeof raw.user !== 'string'
  ) {
    return null;
  }
  const run = restoreRun(raw.run);
  return {
    sessionId: raw.sessionId,
    runId: raw.runId,
    user: raw.user,
    run: run && run.runId === raw.runId ? run : null
  };
}

/** The session id read back, or null. */
export function restoreCurrent(raw: unknown): string | null {
  return typeof raw === 'string' && raw ? raw : null;
}

/**
 * What to cache for a live run: null once it has ended or before it has an id; without the
 * view when its JSON is over `cap` characters.
 */
export function liveSnapshot(user: string, run: IRunView, cap = LIVE_CAP): IStoredLive | null {
  if (!run.runId || !run.sessionId || isFinished(run)) {
    return null;
  }
  const fits = JSON.stringify(run).length <= cap;
  return { sessionId: run.sessionId, runId: run.runId, user, run: fits ? run : null };
}

/** The sessions with `prompt` recorded for run `runId` of session `sessionId`. */
export function withPrompt(
  sessions: StoredSessions,
  sessionId: string,
  runId: string,
  prompt: string,
  now: number
): StoredSessions {
  const s = sessions[sessionId] ?? {
    id: sessionId,
    title: prompt.slice(0, 60),
    startedAt: now,
    prompts: {}
  };
  return { ...sessions, [sessionId]: { ...s, prompts: { ...s.prompts, [runId]: prompt } } };
}

/**
 * The panel's state, held in memory and written through to the store. It is read back as soon
 * as it is made; writes wait for that, so nothing read can overwrite them, and several writes of
 * one key while waiting make one. Writes are not awaited: a store that fails loses only what a
 * reload would resume from.
 */
export class PanelState {
  /**
   * `tab` (with its keys under `tabPrefix`, e.g. the workspace's name) keeps every value at once
   * too; what it holds wins over the workspace's, which may have missed the last changes.
   */
  constructor(store: IStateStore, tab: ITabStore | null = null, tabPrefix = '') {
    this._store = store;
    this._tab = tab;
    this._tabPrefix = tabPrefix;
    this._fromTab = this._readTab();
    this._ready = this._read();
  }

  /** Sessions started here. */
  get sessions(): StoredSessions {
    return this._sessions;
  }

  /** The session shown, or null. */
  get current(): string | null {
    return this._current;
  }

  /** The live run cached for a reattach, or null. */
  get live(): IStoredLive | null {
    return this._live;
  }

  /** The notebook the chat is bound to, or null. */
  get notebook(): string | null {
    return this._notebook;
  }

  /**
   * Resolves once the state is read back (the app's store answers once the workspace is
   * loaded). What was set meanwhile wins over what is read.
   */
  restore(): Promise<void> {
    return this._ready;
  }

  /** Show session `id` (null: a new, unnamed session). */
  setCurrent(id: string | null): void {
    if (id === this._current && this._touched.has(StateKeys.current)) {
      return;
    }
    this._current = id;
    this._write(StateKeys.current);
  }

  /** Record what was asked in run (or task) `runId` of session `sessionId`. */
  rememberPrompt(sessionId: string, runId: string, prompt: string, now = Date.now()): void {
    this._sessions = withPrompt(this._sessions, sessionId, runId, prompt, now);
    this._write(StateKeys.sessions);
  }

  /** Bind the chat to notebook `path` (null: unbound). */
  setNotebook(path: string | null): void {
    if (path === this._notebook && this._touched.has(StateKeys.notebook)) {
      return;
    }
    this._notebook = path;
    this._write(StateKeys.notebook);
  }

  /** The model picked in the panel, or null (the server's default). */
  get model(): string | null {
    return this._model;
  }

  /** Remember the model picked (null: the server's default). */
  setModel(model: string | null): void {
    if (model === this._model && this._touched.has(StateKeys.model)) {
      return;
    }
    this._model = model;
    this._write(StateKeys.model);
  }

  /** Cache the live run (null: none to resume). */
  setLive(live: IStoredLive | null): void {
    if (live === null && this._live === null && this._touched.has(StateKeys.live)) {
      return;
    }
    this._live = live;
    this._write(StateKeys.live);
  }

  /**
   * Keep the live run for a reload: every event, but text at most once a second (each write
   * saves the workspace); a finished run is forgotten.
   */
  cacheLive(user: string, run: IRunView, now = Date.now()): void {
    if (isFinished(run)) {
      this.setLive(null);
      return;
    }
    const last = run.parts[run.parts.length - 1]?.kind;
    if (now - this._lastCache < 1000 && (last === 'text' || last === 'reasoning')) {
      return;
    }
    this._lastCache = now;
    this.setLive(liveSnapshot(user, run));
  }

  /** What this tab saved (before a reload), as it was saved, by key. */
  private _readTab(): Map<string, string> {
    const found = new Map<string, string>();
    for (const key of StateKeys.all) {
      try {
        const text = this._tab?.getItem(this._tabPrefix + key) ?? null;
        if (text !== null) {
          this._restore(key, JSON.parse(text));
          found.set(key, text);
        }
      } catch {
        // no storage in this tab, or not JSON: the workspace's value
      }
    }
    return found;
  }

  private async _read(): Promise<void> {
    const values = await Promise.all(
      StateKeys.all.map(key => this._store.fetch(key).catch(() => undefined))
    );
    StateKeys.all.forEach((key, i) => {
      const tabText = this._fromTab.get(key);
      if (key === StateKeys.sessions || (!this._touched.has(key) && tabText === undefined)) {
        this._restore(key, values[i]); // the sessions merge, what is here winning
      }
      const missed = tabText !== undefined && tabText !== JSON.stringify(values[i] ?? null);
      if (missed && !this._touched.has(key)) {
        this._write(key); // the workspace missed the tab's last change
      }
    });
  }

  /** Set `key` from a value read back (sessions: merged under those held). */
  private _restore(key: string, raw: unknown): void {
    if (key === StateKeys.sessions) {
      this._sessions = { ...restoreSessions(raw), ...this._sessions };
    } else if (key === StateKeys.current) {
      this._current = restoreCurrent(raw);
    } else if (key === StateKeys.live) {
      this._live = restoreLive(raw);
    } else if (key === StateKeys.notebook) {
      this._notebook = restoreCurrent(raw); // a non-empty string, like the session id
    } else if (key === StateKeys.model) {
      this._model = restoreCurrent(raw);
    }
  }

  private _value(key: string): unknown {
    const { sessions, current, notebook, model } = StateKeys;
    const values: { [key: string]: unknown } = { [sessions]: this._sessions, [model]: this._model };
    values[current] = this._current;
    values[notebook] = this._notebook;
    return key in values ? values[key] : this._live;
  }

  private _write(key: string): void {
    this._touched.add(key);
    this._writeTab(key);
    if (this._pending.has(key)) {
      return; // the write already queued saves the value as it is then
    }
    this._pending.add(key);
    void this._ready.then(async () => {
      this._pending.delete(key);
      const value = this._value(key);
      try {
        await (value === null
          ? this._store.remove(key)
          : this._store.save(key, value as unknown as ReadonlyPartialJSONValue));
      } catch (error) {
        console.warn(`jupyter-resolve: could not save ${key}:`, error);
      }
    });
  }

  /** Keep `key`'s value in the tab at once; one it cannot hold is dropped there. */
  private _writeTab(key: string): void {
    try {
      this._tab?.setItem(this._tabPrefix + key, JSON.stringify(this._value(key)));
    } catch {
      try {
        this._tab?.removeItem(this._tabPrefix + key);
      } catch {
        // no storage in this tab
      }
    }
  }

  private _store: IStateStore;
  private _tab: ITabStore | null;
  private _tabPrefix: string;
  private _fromTab: Map<string, string>;
  private _ready: Promise<void>;
  private _sessions: StoredSessions = {};
  private _current: string | null = null;
  private _live: IStoredLive | null = null;
  private _notebook: string | null = null;
  private _model: string | null = null;
  private _touched = new Set<string>();
  private _pending = new Set<string>();
  private _lastCache = 0;
}
