/**
 * The answers of the paged listings the panel's tabs read (`GET resolve/api/sessions`, and the
 * `indexing` flag `runs` and `sessions` share) and the MCP tokens (`GET/POST
 * resolve/api/mcp-tokens`), checked where they enter. Pure: no I/O, no DOM.
 */
import { isObject, optionalString, ShapeError } from './shapes';
import { StoredSessions } from './state';

/** A session as the Sessions tab lists it. */
export interface ISessionRow {
  readonly id: string;
  /** The title given here when the session began in this browser, else its first prompt. */
  readonly title: string;
  readonly runs: number;
  /** Epoch milliseconds: its first run's start. */
  readonly startedAt: number;
  /** Epoch milliseconds: its newest run's start (the listing's order). */
  readonly lastAt: number;
  /** The A2A peer that ran it, if one did. */
  readonly peer: string | null;
}

function seconds(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Whether a listing says its index is still being rebuilt (older runs may be missing). */
export function validateIndexing(body: unknown): boolean {
  return isObject(body) && body.indexing === true;
}

/** Check `GET resolve/api/sessions`; rows without an id are dropped. */
export function validateSessions(body: unknown, stored: StoredSessions = {}): ISessionRow[] {
  if (!isObject(body) || !Array.isArray(body.sessions)) {
    throw new ShapeError('sessions: expected {sessions: [...]}');
  }
  return body.sessions
    .filter((s): s is Record<string, unknown> => isObject(s) && !!optionalString(s.session_id))
    .map(s => {
      const id = s.session_id as string;
      const prompt = optionalString(s.prompt);
      return {
        id,
        title: stored[id]?.title ?? (prompt ? prompt.slice(0, 60) : id),
        runs: seconds(s.runs),
        startedAt: seconds(s.started_at) * 1000,
        lastAt: seconds(s.last_at) * 1000,
        peer: optionalString(s.peer)
      };
    });
}

/** An MCP token as `GET resolve/api/mcp-tokens` lists it (never the token itself). */
export interface IMcpToken {
  readonly id: string;
  readonly name: string;
  /** Epoch seconds. */
  readonly created: number;
}

function token(t: unknown): IMcpToken | null {
  if (!isObject(t) || !optionalString(t.id)) {
    return null;
  }
  return { id: t.id as string, name: typeof t.name === 'string' ? t.name : '', created: seconds(t.created) };
}

/** Check `GET resolve/api/mcp-tokens`. */
export function validateMcpTokens(body: unknown): IMcpToken[] {
  if (!isObject(body) || !Array.isArray(body.tokens)) {
    throw new ShapeError('mcp-tokens: expected {tokens: [...]}');
  }
  return body.tokens.map(token).filter((t): t is IMcpToken => t !== null);
}

/** Check `POST resolve/api/mcp-tokens`: the new token (shown once) and its listing. */
export function validateNewMcpToken(body: unknown): IMcpToken & { readonly token: string } {
  const listed = token(body);
  const secret = isObject(body) ? optionalString(body.token) : null;
  if (!listed || !secret) {
    throw new ShapeError('mcp-tokens: expected {token, id, name, created}');
  }
  return { ...listed, token: secret };
}
