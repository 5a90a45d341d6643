/** What the shape checks share: their error, and the small tests of a JSON value. */

/** A shape error: what arrived did not match the contract. */
export class ShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

/** A JSON object (not null, not a list). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** nbformat allows a source as a list of lines; the panel works with one string. */
export function sourceText(value: unknown): string | null {
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value) && value.every(line => typeof line === 'string')) {
    return value.join('');
  }
  return null;
}

/** A non-empty string, else null. */
export function optionalString(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}
