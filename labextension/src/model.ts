/**
 * The panel's state: sessions, turns, the live run, the soul and model picked. It calls the API
 * (api.ts) and folds events with run.ts; React components render it and call its methods. What
 * the server offers is in server-info.ts, the bound notebook's variables in variables.ts,
 * decisions in decisions.ts, what a message sends in send.ts.
 */
import { ISignal, Signal } from '@lumino/signaling';
import * as api from './api';
import { Decisions } from './decisions';
import { IInstructionFile, IRunEvent } from './events';
import { lockedTitle } from './hub';
import { describeError } from './request';
import { applyEvent, emptyRun } from './run';
import { sendFailure, startRun } from './send';
import { Steering } from './steer';
import { ServerInfo } from './server-info';
import { ISessionItem, sessionItems } from './sessions';
import { DEFAULT_SETTINGS, IPanelSettings } from './settings';
import { ISessionRow } from './listings';
import { IListingPage } from './pages';
import { IStateStore, IStoredLive, ITabStore, PanelState } from './state';
import { pickedModel } from './status';
import { ITurn, latestInstructions } from './turn';
import { ITranscript } from './validate';
import { NotebookVariables } from './variables';
import { Poller, pageShown, unseenLive } from './watch';

/** The panel's model. */
export class ChatModel {
  /**
   * `store` keeps the sessions and the live run across reloads (the app's `IStateDB`), `tab`
   * (the tab's `sessionStorage`, keys under `tabPrefix`) what changed just before one.
   */
  constructor(store: IStateStore, tab: ITabStore | null = null, tabPrefix = '') {
    this._state = new PanelState(store, tab, tabPrefix);
    this.server.changed.connect(() => this._emit());
  }

  /** Emitted on every change; the view re-renders. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The server's health, souls and models. */
  readonly server = new ServerInfo();
  sessionId: string | null = null;
  turns: ITurn[] = [];
  soul = DEFAULT_SETTINGS.defaultSoul;
  /** The panel's settings (the setting registry's, live). */
  settings: IPanelSettings = DEFAULT_SETTINGS;
  mode: 'chat' | 'task' = 'chat';
  error: string | null = null;
  notice: string | null = null;
  /** The notebook this chat is bound to ("Ask Resolve about this notebook"), by path. */
  notebook: string | null = null;
  /** The bound notebook's kernel variables, for `@name`. */
  readonly variables = new NotebookVariables(
    () => this.notebook,
    () => this._emit()
  );
  /** Messages steering the live run; one to send as a new run once it ends. */
  readonly steering = new Steering(api.steer, () => this._emit());
  /** Proposals and calls decided from here. */
  readonly decisions = new Decisions(
    report => {
      this.error = report.error ?? this.error;
      this.notice = report.notice ?? this.notice;
    },
    () => this._emit()
  );

  /**
   * Asks for the session's runs started elsewhere (another page, `%resolve`) while the chat is
   * idle, and follows them (issue 40.4); the panel starts it when shown, stops it when hidden.
   */
  readonly watch = new Poller(
    () => this._attachLive(),
    () => !!this.sessionId && !this._streaming && !this._opening && pageShown()
  );

  /** The run being streamed, if any. */
  get live(): ITurn | null {
    const last = this.turns[this.turns.length - 1];
    return this._streaming && last ? last : null;
  }

  get busy(): boolean {
    return this._streaming;
  }

  /** The next run's model ('' : the server's default; always that while `model` is locked). */
  get model(): string {
    return lockedTitle(this.server.health?.locked, 'model') !== null
      ? ''
      : pickedModel(this.server.models, this._state.model);
  }

  /** Pick the model of the next runs ('' : the server's default). */
  setModel(model: string): void {
    this._state.setModel(model && model !== this.server.models?.default ? model : null);
    this._emit();
  }

  /**
   * The model the next run will use, e.g. "openai · gpt-4o" or "offline scripted model": the
   * picker's choice, else the server's default (not the model of the last run).
   */
  get modelLabel(): string {
    return this.server.modelLabel(this.model || this.server.models?.default);
  }

  /** The project instructions the session's latest run read, and that run's id. */
  get instructions(): { runId: string; files: IInstructionFile[] } | null {
    return latestInstructions(this.turns);
  }

  /** Load health, souls and the session of the last visit; reattach to a live run. */
  async start(): Promise<void> {
    this.server.refreshAll();
    await this._state.restore();
    this._emit(); // the remembered model
    this.notebook = this.notebook ?? this._state.notebook;
    const live = this._state.live;
    const current = live?.sessionId ?? this._state.current;
    if (current) {
      await this.openSession(current, live);
    }
  }

  /**
   * Start an empty session (the server names it on the first run). A chat bound to a notebook
   * stays bound (the header shows it; unbind there): the next run works in its folder.
   */
  newSession(): void {
    if (this._streaming) {
      return;
    }
    this.sessionId = null;
    this.turns = [];
    this.error = null;
    this._state.setCurrent(null);
    this._emit();
  }

  /**
   * Bind the chat to a notebook (null: unbind): the next messages name it. The conversation so
   * far stays in view (a running answer goes on about the notebook it was sent with).
   */
  bindNotebook(path: string | null): void {
    if (path === this.notebook) {
      return;
    }
    this.notebook = path;
    this.variables.list = null;
    this.variables.note = null;
    this._state.setNotebook(path);
    this._emit();
  }

  /** The notebook in front changed: a chat bound to a notebook follows it. */
  followNotebook(path: string | null): void {
    if (this.notebook !== null && path !== null) {
      this.bindNotebook(path);
    }
  }

  /** The current session's transcript as the server keeps it (null: no session yet). */
  async transcript(): Promise<ITranscript | null> {
    return this.sessionId ? api.transcript(this.sessionId) : null;
  }

  /** A page of the server's sessions, titled as this browser named those begun here. */
  sessionsPage(before: string | null): Promise<IListingPage<ISessionRow>> {
    return api.sessionsPage(before, api.LIST_PAGE, this._state.sessions);
  }

  /**
   * Show a session: replay each of its runs from the run log; a live run is followed to its
   * end. With `live` (cached at the last event seen before a reload) the live run resumes from
   * its `lastEventId` with `Last-Event-ID` rather than from the start.
   */
  async openSession(sessionId: string, live: IStoredLive | null = null): Promise<void> {
    if (this._streaming) {
      this.notice = 'Stop the running answer before switching sessions.';
      this._emit();
      return;
    }
    this.sessionId = sessionId;
    this.turns = [];
    this.error = null;
    this._state.setCurrent(sessionId);
    this._opening++;
    try {
      await this._open(sessionId, live);
    } finally {
      this._opening--;
    }
  }

  private async _open(sessionId: string, live: IStoredLive | null): Promise<void> {
    this._emit();
    const stored = this._state.sessions[sessionId];
    let items: ISessionItem[];
    try {
      items = sessionItems(await api.runs(sessionId));
    } catch (error) {
      this.error = describeError(error, 'Runs');
      this._emit();
      return;
    }
    const turns: ITurn[] = items.map(item => ({
      user: stored?.prompts[item.id] ?? '',
      run: emptyRun(item.startedAt * 1000, item.kind === 'task')
    }));
    this.turns = turns;
    this._emit();
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      const turn = turns[i];
      if (live && live.runId === item.id) {
        turn.run = live.run ?? turn.run;
        turn.user = live.user;
      }
      if (item.live) {
        await this._follow(turn, item, turn.run.lastEventId);
      } else {
        // a finished run ends when its log says, not when it is replayed
        const ended = item.endedAt !== null ? item.endedAt * 1000 : undefined;
        await this._replay(turn, item, turn.run.lastEventId, ended);
      }
    }
    if (live && !items.some(item => item.id === live.runId)) {
      this._state.setLive(null);
    }
  }

  /** Send a message in the current session (chat or task mode). */
  async send(
    text: string,
    options: { notebook?: string; mentions?: readonly string[] } = {}
  ): Promise<void> {
    const message = text.trim();
    if (!message || this._streaming) {
      return;
    }
    const notebook = options.notebook ?? this.notebook;
    let mentions = options.mentions;
    if (!mentions && notebook && notebook === this.notebook && /@[A-Za-z_]/.test(message)) {
      mentions = await this.variables.mentionedIn(message);
    }
    if (this._streaming) {
      return; // another send started while the names loaded
    }
    const turn: ITurn = { user: message, run: emptyRun(Date.now(), this.mode === 'task') };
    this.turns = [...this.turns, turn];
    this.error = null;
    this._streaming = true;
    this._emit();
    const { mode, sessionId, soul, model } = this; // as they are when it is sent
    const choices = { mode, sessionId, soul, model, notebook, mentions };
    try {
      await startRun(message, choices, (event: IRunEvent) => this._onEvent(turn, event));
    } catch (error) {
      const failed = sendFailure(error, turn.run, this.mode === 'task' ? 'Task' : 'Chat');
      this.error = failed.banner ?? this.error;
      if (failed.reloadModels) {
        void this.server.refreshModels();
      }
      if (!turn.run.endedAt) {
        turn.run.endedAt = Date.now();
      }
    } finally {
      this._streaming = false;
      this._state.setLive(null);
      this._emit();
      this.steering.ended(next => void this.send(next));
    }
  }

  /** Cancel the live run. */
  async stop(): Promise<void> {
    const live = this.live;
    if (!live?.run.runId) {
      return;
    }
    try {
      await (live.run.task ? api.cancelTask(live.run.runId) : api.cancel(live.run.runId));
    } catch (error) {
      this.error = describeError(error, 'Stop');
      this._emit();
    }
  }

  setSoul(soul: string): void {
    this.soul = soul;
    this._emit();
  }

  /**
   * Follow the settings: a new default soul applies unless another soul was picked here.
   */
  setSettings(settings: IPanelSettings): void {
    if (this.soul === this.settings.defaultSoul) {
      this.soul = settings.defaultSoul;
    }
    this.settings = settings;
    this._emit();
  }

  setMode(mode: 'chat' | 'task'): void {
    this.mode = mode;
    this._emit();
  }

  dismiss(): void {
    this.error = this.notice = null;
    this._emit();
  }

  private _onEvent(turn: ITurn, event: IRunEvent): void {
    const first = !turn.run.runId;
    applyEvent(turn.run, event);
    this.server.noteRun(event.type);
    if (first && turn.run.runId) {
      this.sessionId = turn.run.sessionId || this.sessionId;
      if (this.sessionId) {
        this._state.setCurrent(this.sessionId);
      }
    }
    const started =
      event.type === 'task.started' || (event.type === 'run.started' && !turn.run.task);
    if (started && this.sessionId && this._streaming && turn.user) {
      // remember what was asked in this browser, by run (or task) id, for the sessions list
      const id = event.type === 'task.started' ? String(event.data.task_id) : event.data.run_id;
      this._state.rememberPrompt(this.sessionId, id, turn.user);
    }
    if (this._streaming && turn.run.runId && !turn.run.task) {
      this._state.cacheLive(turn.user, turn.run);
    }
    void this.steering.flush(turn.run); // a message sent before the run had its id
    this._emit();
  }

  private async _replay(turn: ITurn, item: ISessionItem, after = 0, endedAt?: number) {
    try {
      await (item.kind === 'task' ? api.taskEvents : api.events)(item.id, after, {
        onEvent: e => {
          applyEvent(turn.run, e, endedAt);
          this._emit();
        }
      });
    } catch (error) {
      turn.run.errors.push(describeError(error, 'Replay'));
      this._emit();
    }
  }

  private async _follow(turn: ITurn, item: ISessionItem, lastEventId: number): Promise<void> {
    this._streaming = true;
    this._emit();
    try {
      await (item.kind === 'task' ? api.taskEvents : api.events)(item.id, lastEventId, {
        onEvent: e => this._onEvent(turn, e)
      });
    } catch (error) {
      this.error = describeError(error, 'Reattach');
    } finally {
      this._streaming = false;
      this._state.setLive(null);
      this._emit();
      this.steering.ended(next => void this.send(next));
    }
  }

  /** Follow the oldest live run of the session shown that no turn shows (it began elsewhere). */
  private async _attachLive(): Promise<void> {
    const sessionId = this.sessionId;
    const items = sessionId ? sessionItems(await api.runningRuns(sessionId)) : [];
    const [item] = unseenLive(items, this.turns.map(t => t.run));
    if (!item || sessionId !== this.sessionId || this._streaming || this._opening) {
      return; // nothing new, or the chat moved on while asking
    }
    const turn: ITurn = { user: '', run: emptyRun(item.startedAt * 1000, item.kind === 'task') };
    this.turns = [...this.turns, turn];
    void this._follow(turn, item, 0);
  }

  private _emit(): void {
    this._changed.emit();
  }

  private _changed = new Signal<this, void>(this);
  private _state: PanelState;
  private _streaming = false;
  private _opening = 0;
}
