/**
 * Everyone on a session sees it live (issue 40.4): while a chat shows a session and is idle, the
 * panel asks now and then for the session's running runs and attaches to those it does not show
 * (started in another page, by `%resolve`, over MCP). This module decides which runs are new and
 * paces the asking: every two seconds, backing off after failures (pure: timers, no I/O, no DOM).
 */
import type { IRunView } from './run';
import type { ISessionItem } from './sessions';

/** How often an idle chat asks for its session's running runs, in milliseconds. */
export const WATCH_INTERVAL = 2000;
/** The longest wait between two asks after failures, in milliseconds. */
export const WATCH_MAX = 30_000;

/** The ids the shown runs answer to: each run's (or task's) id and its steps' run ids. */
export function shownIds(runs: readonly IRunView[]): Set<string> {
  const ids = new Set<string>();
  for (const run of runs) {
    if (run.runId) {
      ids.add(run.runId);
    }
    for (const step of run.steps ?? []) {
      if (step.runId) {
        ids.add(step.runId);
      }
    }
  }
  return ids;
}

/** The live items (runs, or tasks) of a session that none of `shown` is, oldest first. */
export function unseenLive(
  items: readonly ISessionItem[],
  shown: readonly IRunView[]
): ISessionItem[] {
  const ids = shownIds(shown);
  return items.filter(item => item.live && !ids.has(item.id));
}

/** The wait before the next ask after `failures` failures in a row: doubled each, capped. */
export function nextDelay(
  failures: number,
  interval = WATCH_INTERVAL,
  max = WATCH_MAX
): number {
  return Math.min(max, interval * 2 ** Math.max(0, Math.min(failures, 16)));
}

/** Timers, replaceable in tests. */
export interface ITimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const GLOBAL_TIMERS: ITimers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: handle => clearTimeout(handle as ReturnType<typeof setTimeout>)
};

/** Whether the browser tab is in front: a tab in the background asks nothing. */
export function pageShown(doc: { readonly visibilityState?: string } | undefined = globalThis.document): boolean {
  return doc?.visibilityState !== 'hidden';
}

/**
 * Calls `tick` every `interval` ms while started and `active()` holds (one call at a time);
 * a tick that throws doubles the wait up to `max`, one that succeeds resets it.
 */
export class Poller {
  constructor(
    private readonly _tick: () => Promise<void>,
    private readonly _active: () => boolean,
    options: { readonly interval?: number; readonly max?: number; readonly timers?: ITimers } = {}
  ) {
    this._interval = options.interval ?? WATCH_INTERVAL;
    this._max = options.max ?? WATCH_MAX;
    this._timers = options.timers ?? GLOBAL_TIMERS;
  }

  /** Whether it is started. */
  get running(): boolean {
    return this._running;
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this._failures;
  }

  /** Start asking (again); a started poller stays as it is. */
  start(): void {
    if (this._running || this._disposed) {
      return;
    }
    this._running = true;
    this._schedule(this._interval);
  }

  /** Stop asking (the panel was hidden); an ask under way finishes. */
  stop(): void {
    this._running = false;
    if (this._timer !== null) {
      this._timers.clear(this._timer);
      this._timer = null;
    }
  }

  /** Stop for good. */
  dispose(): void {
    this._disposed = true;
    this.stop();
  }

  private _schedule(ms: number): void {
    if (!this._running || this._timer !== null) {
      return;
    }
    this._timer = this._timers.set(() => void this._fire(), ms);
  }

  private async _fire(): Promise<void> {
    this._timer = null;
    if (!this._running) {
      return;
    }
    if (this._active()) {
      try {
        await this._tick();
        this._failures = 0;
      } catch {
        this._failures++;
      }
    }
    this._schedule(nextDelay(this._failures, this._interval, this._max));
  }

  private _interval: number;
  private _max: number;
  private _timers: ITimers;
  private _timer: unknown = null;
  private _running = false;
  private _disposed = false;
  private _failures = 0;
}
