/**
 * The panel's state: sessions, turns, the live run, souls, the model answering. It calls the
 * API (api.ts) and folds events with run.ts; React components render it and call its methods.
 */
import { ISignal, Signal } from '@lumino/signaling';
import * as api from './api';
import { mentionedNames } from './mentions';
import { acceptedCells, IPlacement } from './proposal';
import { ResolveRequestError } from './request';
import {
  applyEvent,
  emptyRun,
  IProposal,
  IRunView,
  isFinished,
  ISessionItem,
  sessionItems
} from './run';
import { DEFAULT_SETTINGS, IPanelSettings } from './settings';
import {
  ISessionInfo,
  IStateStore,
  IStoredLive,
  listSessions,
  liveSnapshot,
  PanelState
} from './state';
import { IModels, modelsNote, pickedModel } from './status';
import { INotebookActions } from './tokens';
import {
  IHealth,
  IInstructionFile,
  IProposedCell,
  IRunEvent,
  IRunInfo,
  ISoul,
  ITranscript,
  IVariable
} from './validate';

/** What a person decided on a proposal, as the card sends it. */
export interface IProposalChoice {
  readonly decision: 'accept' | 'reject';
  /** Accept and run: the server runs the accepted cells in the notebook's kernel. */
  readonly run?: boolean;
  /** The cells as edited before accepting (only when edited). */
  readonly cells?: IProposedCell[];
  readonly reason?: string;
}

/** One exchange: what the person asked and the run that answered. */
export interface ITurn {
  /** What this browser sent; '' for a run started elsewhere (see {@link promptOf}). */
  user: string;
  run: IRunView;
}

/** What was asked in a turn: as sent from here, else as the run log kept it. */
export function promptOf(turn: ITurn): string {
  return turn.user || turn.run.prompt;
}

/** A message to show about an endpoint that is missing or failing. */
export function describeError(error: unknown, what: string): string {
  if (error instanceof ResolveRequestError) {
    if (error.notAvailable) {
      return `${what} is not available on this server yet (${error.message}).`;
    }
    if (error.status === 403) {
      return `${what}: refused (403) — the page may have lost its login; reload it.`;
    }
    return `${what}: ${error.message}`;
  }
  return `${what}: ${(error as Error)?.message ?? String(error)}`;
}

/** The panel's model. */
export class ChatModel {
  /** `store` keeps the sessions and the live run across reloads (the app's `IStateDB`). */
  constructor(store: IStateStore) {
    this._state = new PanelState(store);
  }

  /** Emitted on every change; the view re-renders. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  sessionId: string | null = null;
  turns: ITurn[] = [];
  health: IHealth | null = null;
  healthError: string | null = null;
  souls: ISoul[] = [];
  soulsError: string | null = null;
  soul = DEFAULT_SETTINGS.defaultSoul;
  /** The panel's settings (the setting registry's, live). */
  settings: IPanelSettings = DEFAULT_SETTINGS;
  mode: 'chat' | 'task' = 'chat';
  error: string | null = null;
  notice: string | null = null;
  /** The notebook this chat is bound to ("Ask Resolve about this notebook"), by path. */
  notebook: string | null = null;
  /** The bound notebook's kernel variables, for `@name` (null: not loaded). */
  variables: IVariable[] | null = null;
  /** Why there are no variables to mention (no notebook, no kernel, an error). */
  variablesNote: string | null = null;
  /** What `GET resolve/api/models` offered (null: not loaded, or the server lacks it). */
  models: IModels | null = null;
  /** Why the models could not be loaded. */
  modelsError: string | null = null;
  /** Proposals being decided from here: proposal id → what is happening. */
  deciding: { [proposalId: string]: string } = {};
  /** How proposals reach notebooks (set by the notebook plugin). */
  notebookActions: INotebookActions | null = null;

  /** The run being streamed, if any. */
  get live(): ITurn | null {
    const last = this.turns[this.turns.length - 1];
    return this._streaming && last ? last : null;
  }

  get busy(): boolean {
    return this._streaming;
  }

  /** The model picked for the next run ('' : the server's default; remembered in IStateDB). */
  get model(): string {
    return pickedModel(this.models, this._state.model);
  }

  /** A quiet note under the picker, e.g. why the provider's list is missing. */
  get modelsNote(): string | null {
    return this.modelsError ?? modelsNote(this.models);
  }

  /** Pick the model of the next runs ('' : the server's default). */
  setModel(model: string): void {
    this._state.setModel(model && model !== this.models?.default ? model : null);
    this._emit();
  }

  async refreshModels(): Promise<void> {
    try {
      this.models = await api.models();
      this.modelsError = null;
    } catch (error) {
      this.models = null;
      // a server without the endpoint: no picker, no note
      this.modelsError =
        error instanceof ResolveRequestError && error.notAvailable
          ? null
          : describeError(error, 'Models');
    }
    this._emit();
  }

  /** Describe the model answering, e.g. "offline scripted model". */
  get modelLabel(): string {
    const live = this.turns[this.turns.length - 1]?.run.model;
    if (this.health?.providerName === 'scripted') {
      return 'offline scripted model';
    }
    if (this.health) {
      const model = live || this.health.model;
      return model ? `${this.health.providerName} · ${model}` : this.health.providerName;
    }
    return live || 'model unknown';
  }

  /** The project instructions the session's latest run read, and that run's id. */
  get instructions(): { runId: string; files: IInstructionFile[] } | null {
    for (let i = this.turns.length - 1; i >= 0; i--) {
      const run = this.turns[i].run;
      if (run.runId && !run.task) {
        return { runId: run.runId, files: run.instructions ?? [] };
      }
    }
    return null;
  }

  /** Load health, souls and the session of the last visit; reattach to a live run. */
  async start(): Promise<void> {
    void this.refreshHealth();
    void this.refreshSouls();
    void this.refreshModels();
    await this._state.restore();
    this._emit(); // the remembered model
    this.notebook = this.notebook ?? this._state.notebook;
    const live = this._state.live;
    const current = live?.sessionId ?? this._state.current;
    if (current) {
      await this.openSession(current, live);
    }
  }

  async refreshHealth(): Promise<void> {
    try {
      this.health = await api.health();
      this.healthError = this.health.problems.join('; ') || null;
    } catch (error) {
      this.healthError = describeError(error, 'Health');
    }
    this._emit();
  }

  async refreshSouls(): Promise<void> {
    try {
      this.souls = await api.souls();
      this.soulsError = null;
    } catch (error) {
      this.souls = [];
      this.soulsError = describeError(error, 'Souls');
    }
    this._emit();
  }

  /** Start an empty session (the server names it on the first run). */
  newSession(): void {
    if (this._streaming) {
      return;
    }
    this.sessionId = null;
    this.turns = [];
    this.error = null;
    this.notebook = null;
    this.variables = null;
    this._state.setCurrent(null);
    this._state.setNotebook(null);
    this._emit();
  }

  /**
   * Bind the chat to a notebook (null: unbind). A new session starts unless this one is
   * empty, so the conversation is about that notebook; false while an answer streams.
   */
  bindNotebook(path: string | null): boolean {
    if (this._streaming) {
      this.notice = 'Stop the running answer before starting a notebook chat.';
      this._emit();
      return false;
    }
    if (path !== null && this.turns.length) {
      this.newSession();
    }
    this.notebook = path;
    this.variables = null;
    this.variablesNote = null;
    this._state.setNotebook(path);
    this._emit();
    return true;
  }

  /** Fetch the bound notebook's variables (for `@name`); a note says why there are none. */
  loadVariables(): Promise<void> {
    // one request at a time: typing `@` asks, and so may a send right after
    this._variablesLoad ??= this._loadVariables().finally(() => (this._variablesLoad = null));
    return this._variablesLoad;
  }

  private async _loadVariables(): Promise<void> {
    const notebook = this.notebook;
    if (!notebook) {
      this.variables = [];
      this.variablesNote = 'Use “Ask Resolve about this notebook” to mention its variables.';
      this._emit();
      return;
    }
    try {
      const answer = await api.variables(notebook);
      if (this.notebook !== notebook) {
        return; // rebound meanwhile
      }
      this.variables = answer.variables;
      this.variablesNote = answer.kernel
        ? answer.variables.length
          ? null
          : `No variables in ${notebook}'s kernel yet.`
        : `${notebook} has no running kernel.`;
    } catch (error) {
      this.variables = [];
      this.variablesNote =
        error instanceof ResolveRequestError && error.notAvailable
          ? 'This server cannot list notebook variables yet.'
          : describeError(error, `The variables of ${notebook}`);
    }
    this._emit();
  }

  /** The current session's transcript as the server keeps it (null: no session yet). */
  async transcript(): Promise<ITranscript | null> {
    return this.sessionId ? api.transcript(this.sessionId) : null;
  }

  /** The replaced cell's source in the open notebook, or null (not open, not a replacement). */
  liveSource(proposal: IProposal): string | null {
    if (!proposal.replaceCellId || !this.notebookActions) {
      return null;
    }
    return this.notebookActions.liveSource(proposal.notebook, proposal.replaceCellId);
  }

  /**
   * Decide a proposal. Accepting opens the notebook first, then tells the server (which runs
   * the cells when asked), then inserts the accepted cells, with their outputs, into the open
   * notebook's model. The run's `notebook.decision` event then shows the decision.
   */
  async decideProposal(run: IRunView, proposal: IProposal, choice: IProposalChoice): Promise<void> {
    const id = proposal.proposalId;
    if (this.deciding[id]) {
      return;
    }
    const actions = this.notebookActions;
    const accept = choice.decision === 'accept';
    const doing = accept ? (choice.run ? 'running…' : 'accepting…') : 'rejecting…';
    this.deciding = { ...this.deciding, [id]: doing };
    this._emit();
    try {
      if (accept && !actions) {
        throw new Error('the notebook integration is not loaded');
      }
      if (accept) {
        await actions!.open(proposal.notebook);
      }
      // in a task, the proposal belongs to the chain's current step (a child run)
      const stepRun = run.task
        ? (run.steps.find(s => s.runId && !s.done)?.runId ?? run.runId)
        : run.runId;
      const answer = await api.decideProposal(stepRun, id, {
        decision: choice.decision,
        ...(choice.run ? { run: true } : {}),
        ...(choice.cells ? { cells: choice.cells } : {}),
        ...(choice.reason ? { reason: choice.reason } : {})
      });
      if (answer.decision === 'accepted' && actions) {
        const cells = acceptedCells(
          choice.cells ?? proposal.cells,
          { run_id: stepRun, call_id: proposal.callId, proposal_id: id },
          answer.outputs,
          answer.execution_counts
        );
        const placed: IPlacement = await actions.apply(proposal, cells);
        if (placed.missing) {
          this.notice =
            `Cell ${placed.missing} is no longer in ${proposal.notebook}: ` +
            'the accepted cells went at its end.';
        }
      }
    } catch (error) {
      this.error = describeError(error, accept ? 'Accept' : 'Reject');
    } finally {
      const { [id]: _done, ...rest } = this.deciding;
      this.deciding = rest;
      this._emit();
    }
  }

  /** Sessions known to this browser and to the server's runs list. */
  async listSessions(): Promise<ISessionInfo[]> {
    return listSessions(this._state.sessions, await api.runs());
  }

  /** The server's runs, newest first. */
  async listRuns(): Promise<IRunInfo[]> {
    return (await api.runs()).sort((a, b) => b.started_at - a.started_at);
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
      if (this.variables === null) {
        await this.loadVariables();
      }
      mentions = mentionedNames(message, (this.variables ?? []).map(v => v.name));
    }
    if (this._streaming) {
      return; // another send started while the names loaded
    }
    const turn: ITurn = { user: message, run: emptyRun(Date.now(), this.mode === 'task') };
    this.turns = [...this.turns, turn];
    this.error = null;
    this._streaming = true;
    this._emit();
    const onEvent = (event: IRunEvent) => this._onEvent(turn, event);
    const onInvalid = (error: Error) => console.warn('jupyter-resolve: skipped an event:', error);
    try {
      if (this.mode === 'task') {
        await api.task(
          {
            goal: message,
            ...(this.sessionId ? { session_id: this.sessionId } : {}),
            ...(this.model ? { model: this.model } : {})
          },
          { onEvent, onInvalid }
        );
      } else {
        await api.chat(
          {
            // only the new message: the server continues the session's transcript (calls and
            // results included), DESIGN 9.1
            messages: [{ role: 'user', content: message }],
            ...(this.sessionId ? { session_id: this.sessionId } : {}),
            ...(this.soul ? { soul: this.soul } : {}),
            ...(this.model ? { model: this.model } : {}),
            ...(notebook ? { notebook } : {}),
            // sent only when there are some: a server without mentions refuses the field
            ...(notebook && mentions?.length ? { mentions: mentions.map(name => ({ name })) } : {})
          },
          { onEvent, onInvalid }
        );
      }
    } catch (error) {
      if (error instanceof ResolveRequestError && error.code === 'model_not_allowed') {
        // the server's allowlist changed under the picker: the turn says why (its message
        // stays, to send again), and the list is loaded again
        turn.run.errors.push(`Not sent: ${error.message}`);
        turn.run.reason = turn.run.reason ?? 'error';
        void this.refreshModels();
      } else {
        this.error = describeError(error, this.mode === 'task' ? 'Task' : 'Chat');
      }
      if (!turn.run.endedAt) {
        turn.run.endedAt = Date.now();
      }
    } finally {
      this._streaming = false;
      this._state.setLive(null);
      this._emit();
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

  /** Approve or deny a waiting call. */
  async decide(run: IRunView, callId: string, decision: 'approve' | 'deny'): Promise<void> {
    // in a task, the call belongs to the chain's current step (a child run)
    const stepRun = run.steps.find(s => s.runId && !s.done)?.runId ?? run.runId;
    try {
      await api.decide(run.task ? stepRun : run.runId, callId, decision);
    } catch (error) {
      this.error = describeError(error, 'Approval');
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
    this.error = null;
    this.notice = null;
    this._emit();
  }

  private _onEvent(turn: ITurn, event: IRunEvent): void {
    const first = !turn.run.runId;
    applyEvent(turn.run, event);
    if (first && turn.run.runId) {
      this.sessionId = turn.run.sessionId || this.sessionId;
      if (this.sessionId) {
        this._state.setCurrent(this.sessionId);
      }
    }
    const started =
      event.type === 'task.started' || (event.type === 'run.started' && !turn.run.task);
    if (started && this.sessionId && this._streaming) {
      // remember what was asked in this browser, by run (or task) id, for the sessions list
      const id = event.type === 'task.started' ? String(event.data.task_id) : event.data.run_id;
      this._state.rememberPrompt(this.sessionId, id, turn.user);
    }
    if (this._streaming && turn.run.runId && !turn.run.task) {
      this._cacheLive(turn);
    }
    this._emit();
  }

  private _cacheLive(turn: ITurn): void {
    if (isFinished(turn.run)) {
      this._state.setLive(null);
      return;
    }
    const now = Date.now();
    const last = turn.run.parts[turn.run.parts.length - 1]?.kind;
    if (now - this._lastCache < 1000 && (last === 'text' || last === 'reasoning')) {
      return; // text: at most one write a second (each saves the workspace); other events always
    }
    this._lastCache = now;
    this._state.setLive(liveSnapshot(turn.user, turn.run));
  }

  private async _replay(
    turn: ITurn,
    item: ISessionItem,
    after = 0,
    endedAt?: number
  ): Promise<void> {
    const read = item.kind === 'task' ? api.taskEvents : api.events;
    try {
      await read(item.id, after, {
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
    const read = item.kind === 'task' ? api.taskEvents : api.events;
    this._streaming = true;
    this._emit();
    try {
      await read(item.id, lastEventId, {
        onEvent: e => this._onEvent(turn, e)
      });
    } catch (error) {
      this.error = describeError(error, 'Reattach');
    } finally {
      this._streaming = false;
      this._state.setLive(null);
      this._emit();
    }
  }

  private _emit(): void {
    this._changed.emit();
  }

  private _changed = new Signal<this, void>(this);
  private _state: PanelState;
  private _streaming = false;
  private _lastCache = 0;
  private _variablesLoad: Promise<void> | null = null;
}
