/**
 * An organization's hub (issue 37, DESIGN 10.5), as the panel shows it: the settings an
 * administrator locked (`GET resolve/api/health` `locked`) and the person's own usage and budgets
 * (`GET resolve/api/usage`), checked where they enter (pure: no I/O, no DOM).
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A shape error in a hub answer. */
export class HubShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

/** The settings the policy locks, by `c.Resolve` name, with the value health shows. */
export type Locked = { readonly [trait: string]: unknown };

/** `health.locked`: {} when nothing is locked (or an older server, or another shape). */
export function validateLocked(value: unknown): Locked {
  return isObject(value) ? { ...value } : {};
}

/** What a locked control says on hover. */
export const LOCKED_TITLE = 'set by the administrator';

/**
 * The tooltip of a control for setting `trait` when the policy locks it, e.g. `set by the
 * administrator (c.Resolve.model = "gpt-4o")`; null when it is not locked.
 */
export function lockedTitle(locked: Locked | null | undefined, trait: string): string | null {
  if (!locked || !Object.prototype.hasOwnProperty.call(locked, trait)) {
    return null;
  }
  const value = locked[trait];
  const shown = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null);
  return shown && shown.length <= 80
    ? `${LOCKED_TITLE} (c.Resolve.${trait} = ${shown})`
    : `${LOCKED_TITLE} (c.Resolve.${trait})`;
}

/** Usage over one period (a day or a month) and its limits. */
export interface IUsagePeriod {
  readonly tokens: number;
  /** USD. */
  readonly cost: number;
  /** null: no limit. */
  readonly limitTokens: number | null;
  readonly limitCost: number | null;
  /** When the period's count starts again (ISO time or epoch seconds as the server said). */
  readonly resetsAt: string | null;
}

/** `GET resolve/api/usage`. */
export interface IUsage {
  readonly provider: string;
  readonly user: string | null;
  /** null: no usage is kept for this server (not the hub provider). */
  readonly day: IUsagePeriod | null;
  readonly month: IUsagePeriod | null;
}

function amount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function period(value: unknown): IUsagePeriod | null {
  if (!isObject(value)) {
    return null;
  }
  const resets = value.resets_at;
  return {
    tokens: amount(value.tokens) ?? 0,
    cost: amount(value.cost) ?? 0,
    limitTokens: amount(value.limit_tokens),
    limitCost: amount(value.limit_cost),
    resetsAt:
      typeof resets === 'string' && resets
        ? resets
        : typeof resets === 'number' && Number.isFinite(resets)
          ? new Date(resets * 1000).toISOString()
          : null
  };
}

/** Check the usage answer. */
export function validateUsage(body: unknown): IUsage {
  if (!isObject(body)) {
    throw new HubShapeError('usage: expected {provider, user, day, month}');
  }
  return {
    provider: typeof body.provider === 'string' ? body.provider : '',
    user: typeof body.user === 'string' && body.user ? body.user : null,
    day: period(body.day),
    month: period(body.month)
  };
}

function money(usd: number): string {
  return `$${usd.toFixed(2)}`;
}

/** One period in words, e.g. "today: 1,200 of 100,000 tokens · $0.01 of $1.00 · resets …". */
export function periodLine(label: string, p: IUsagePeriod): string {
  const tokens = p.tokens.toLocaleString('en-US');
  const parts = [
    p.limitTokens === null
      ? `${tokens} tokens`
      : `${tokens} of ${p.limitTokens.toLocaleString('en-US')} tokens`,
    p.limitCost === null ? money(p.cost) : `${money(p.cost)} of ${money(p.limitCost)}`
  ];
  if (p.resetsAt && (p.limitTokens !== null || p.limitCost !== null)) {
    parts.push(`resets ${p.resetsAt}`);
  }
  return `${label}: ${parts.join(' · ')}`;
}

/** The Status tab's lines for the usage, or [] when none is kept (`day` null). */
export function usageLines(usage: IUsage | null): string[] {
  if (!usage?.day) {
    return [];
  }
  const lines = [periodLine('today', usage.day)];
  if (usage.month) {
    lines.push(periodLine('this month', usage.month));
  }
  return lines;
}
