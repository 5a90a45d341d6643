/**
 * When streamed text is rendered (pure: the clock is passed in, so tests drive it by hand).
 *
 * A throttle, not a debounce: the first change renders at once, later ones at most once every
 * `interval` ms while text keeps arriving, and the last change is always rendered. A debounce
 * (wait for a quiet moment) shows nothing at all while a fast model streams. Renders never
 * overlap: rendermime renders asynchronously, and an older render finishing after a newer one
 * would put older text back on screen.
 */

/** The timer functions the throttle uses (`window`'s in the panel). */
export interface IClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): number;
  clearTimeout(id: number): void;
}

/** Render at most once per interval while changes keep coming, and once after the last. */
export class RenderThrottle {
  /** `render` draws the newest text (it reads it when called, not when scheduled). */
  constructor(
    private readonly _render: () => Promise<void> | void,
    private readonly _interval: number,
    private readonly _clock: IClock
  ) {}

  /** The text changed: render it now, or as soon as the interval since the last render allows. */
  changed(): void {
    this._dirty = true;
    this._schedule();
  }

  /** Stop: nothing scheduled runs any more. */
  dispose(): void {
    this._disposed = true;
    if (this._timer !== null) {
      this._clock.clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _schedule(): void {
    if (this._disposed || !this._dirty || this._timer !== null || this._rendering) {
      return;
    }
    const wait = Math.max(0, this._last + this._interval - this._clock.now());
    this._timer = this._clock.setTimeout(() => this._run(), wait);
  }

  private _run(): void {
    this._timer = null;
    if (this._disposed) {
      return;
    }
    this._dirty = false;
    this._rendering = true;
    this._last = this._clock.now();
    const done = () => {
      this._rendering = false;
      this._schedule(); // text that came while this render ran
    };
    let result: Promise<void> | void;
    try {
      result = this._render();
    } catch {
      result = undefined;
    }
    if (result) {
      result.then(done, done);
    } else {
      done();
    }
  }

  private _dirty = false;
  private _rendering = false;
  private _disposed = false;
  private _timer: number | null = null;
  private _last = -Infinity;
}
