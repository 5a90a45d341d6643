/** What the server offers the panel: its health, the souls and agents to pick from, the models. */
import { ISignal, Signal } from '@lumino/signaling';
import { IAgent } from './agents';
import * as api from './api';
import { describeError, ResolveRequestError } from './request';
import { IModels, modelsNote } from './status';
import { IHealth, ISoul } from './validate';

/** How often, and how many times at most, health is asked again while the local model starts. */
const STARTING_POLL_MS = 2000;
const STARTING_POLLS = 60;

/** The server's health, souls and models, each loaded (and loaded again) on its own. */
export class ServerInfo {
  /** Emitted when anything here was loaded again. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  health: IHealth | null = null;
  healthError: string | null = null;
  souls: ISoul[] = [];
  soulsError: string | null = null;
  /** The external agents (`GET resolve/api/agents`); [] when none or the server has none. */
  agents: IAgent[] = [];
  agentsError: string | null = null;
  /** What `GET resolve/api/models` offered (null: not loaded, or the server lacks it). */
  models: IModels | null = null;
  /** Why the models could not be loaded. */
  modelsError: string | null = null;

  /** A quiet note under the picker, e.g. why the provider's list is missing. */
  get modelsNote(): string | null {
    return this.modelsError ?? modelsNote(this.models);
  }

  /** A model's label, e.g. "offline scripted model", "openai · gpt-4o" (`named`: else the default). */
  modelLabel(named?: string): string {
    const health = this.health;
    if (health?.providerName === 'scripted') {
      return 'offline scripted model';
    }
    if (health) {
      const model = named || health.model;
      return model ? `${health.providerName} · ${model}` : health.providerName;
    }
    return named || 'model unknown';
  }

  /**
   * A run of this panel started or ended: the local model server (issue 34) starts on its
   * first use, so its state is asked again then (and while it starts), and the header says
   * what the Status tab says rather than the state of the panel's first load.
   */
  noteRun(type: string): void {
    if (this.health?.local && (type === 'run.started' || type === 'run.completed')) {
      this._startingPolls = 0;
      void this.refreshHealth();
    }
  }

  /** Load everything again, each part on its own. */
  refreshAll(): void {
    void this.refreshHealth();
    void this.refreshSouls();
    void this.refreshAgents();
    void this.refreshModels();
  }

  async refreshHealth(): Promise<void> {
    try {
      this.health = await api.health();
      this.healthError = this.health.problems.join('; ') || null;
      if (this.health.local?.state === 'starting' && this._startingPolls++ < STARTING_POLLS) {
        window.setTimeout(() => void this.refreshHealth(), STARTING_POLL_MS);
      }
    } catch (error) {
      this.healthError = describeError(error, 'Health');
    }
    this._changed.emit();
  }

  async refreshSouls(): Promise<void> {
    try {
      this.souls = await api.souls();
      this.soulsError = null;
    } catch (error) {
      this.souls = [];
      this.soulsError = describeError(error, 'Souls');
    }
    this._changed.emit();
  }

  async refreshAgents(): Promise<void> {
    try {
      this.agents = await api.agents();
      this.agentsError = null;
    } catch (error) {
      this.agents = [];
      // a server without external agents (404): none, and nothing to say
      const none = error instanceof ResolveRequestError && error.status === 404;
      this.agentsError = none ? null : describeError(error, 'External agents');
    }
    this._changed.emit();
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
    this._changed.emit();
  }

  private _changed = new Signal<this, void>(this);
  private _startingPolls = 0;
}
