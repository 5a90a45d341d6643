/**
 * Server shapes are checked where they enter (DESIGN 3.6): an event with an unknown type or a
 * missing field is refused here, so the panel works with typed values only.
 */

/** The normalized event types of DESIGN 3.6. */
export const EVENT_TYPES = [
  'run.started',
  'text.delta',
  'reasoning.delta',
  'tool.requested',
  'tool.approval',
  'tool.started',
  'tool.completed',
  'usage',
  'run.error',
  'run.completed',
  'task.started',
  'task.completed',
  'context.compacted'
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A MIME bundle as Jupyter outputs carry it. */
export type MimeBundle = { readonly [mime: string]: unknown };

/** One normalized event of a run. */
export interface IRunEvent {
  readonly seq: number;
  readonly type: EventType;
  readonly data: IEventData;
}

/** The union of every event's fields (each event carries a subset, `run_id` always). */
export interface IEventData {
  /** Every run event carries it; task.* events carry `task_id` instead. */
  readonly run_id: string;
  readonly session_id?: string;
  readonly goal?: string;
  /** `run.started`: the message that began the run. */
  readonly prompt?: string;
  readonly chain?: string[];
  readonly runs?: string[];
  readonly roles?: string[];
  readonly soul?: string | null;
  readonly model?: string;
  readonly budget?: { readonly rounds?: number };
  readonly text?: string;
  readonly call_id?: string;
  readonly name?: string;
  readonly arguments?: unknown;
  readonly state?: 'waiting' | 'approved' | 'denied';
  readonly ok?: boolean;
  readonly output?: string;
  readonly mime?: MimeBundle | null;
  readonly truncated?: boolean;
  readonly ms?: number;
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  readonly code?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly rounds?: number;
  readonly summary?: { readonly text?: string; readonly [key: string]: unknown } | null;
  readonly task_id?: string;
  readonly role?: string;
  readonly parent?: string | null;
  readonly [key: string]: unknown;
}

/** A shape error: what arrived did not match the contract. */
export class ShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REQUIRED: { [T in EventType]: readonly string[] } = {
  'run.started': ['session_id'],
  'text.delta': ['text'],
  'reasoning.delta': ['text'],
  'tool.requested': ['call_id', 'name'],
  'tool.approval': ['call_id', 'state'],
  'tool.started': ['call_id'],
  'tool.completed': ['call_id', 'ok'],
  usage: [],
  'run.error': ['message'],
  'run.completed': ['reason'],
  'task.started': ['task_id'],
  'task.completed': ['task_id', 'reason'],
  'context.compacted': []
};

/** Check one SSE frame (`id`, `event`, `data` text) and return the typed event. */
export function validateEvent(id: string | null, type: string, data: string): IRunEvent {
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    throw new ShapeError(`unknown event type ${JSON.stringify(type)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new ShapeError(`${type}: data is not JSON`);
  }
  const idField = type.startsWith('task.') ? 'task_id' : 'run_id';
  if (!isObject(parsed) || typeof parsed[idField] !== 'string') {
    throw new ShapeError(`${type}: data must be an object with ${idField}`);
  }
  for (const field of REQUIRED[type as EventType]) {
    if (!(field in parsed)) {
      throw new ShapeError(`${type}: missing ${field}`);
    }
  }
  const seq = id === null ? NaN : Number(id);
  return { seq, type: type as EventType, data: parsed as unknown as IEventData };
}

/** A row of `GET resolve/api/runs`. */
export interface IRunInfo {
  readonly run_id: string;
  readonly session_id: string;
  readonly soul: string | null;
  readonly model: string;
  readonly status: 'running' | 'completed';
  readonly reason: string | null;
  /** Epoch seconds. */
  readonly started_at: number;
  /** Epoch seconds; null while the run is live. */
  readonly ended_at: number | null;
  /** The start of the message that began the run, when the server kept it. */
  readonly prompt: string | null;
  /** Set on the steps of a task (role chain): the task's id. */
  readonly task_id: string | null;
  readonly events: number;
  readonly [key: string]: unknown;
}

/** Check `GET resolve/api/runs`: rows without ids are dropped, the rest normalized. */
export function validateRuns(body: unknown): IRunInfo[] {
  if (!isObject(body) || !Array.isArray(body.runs)) {
    throw new ShapeError('runs: expected {runs: [...]}');
  }
  const number = (value: unknown): number | null =>
    typeof value === 'number' && Number.isFinite(value) ? value : null;
  return body.runs
    .filter(
      (r): r is Record<string, unknown> =>
        isObject(r) && typeof r.run_id === 'string' && typeof r.session_id === 'string'
    )
    .map(r => ({
      ...r,
      run_id: r.run_id as string,
      session_id: r.session_id as string,
      soul: typeof r.soul === 'string' ? r.soul : null,
      model: typeof r.model === 'string' ? r.model : '',
      status: r.status === 'running' ? 'running' : 'completed',
      reason: typeof r.reason === 'string' ? r.reason : null,
      started_at: number(r.started_at) ?? 0,
      ended_at: number(r.ended_at),
      prompt: typeof r.prompt === 'string' ? r.prompt : null,
      task_id: typeof r.task_id === 'string' ? r.task_id : null,
      events: number(r.events) ?? 0
    }));
}

/** Whether agent code runs under the sandbox, as `/resolve/api/health` says. */
export interface ISandbox {
  readonly kind: 'bwrap' | 'none';
  /** `sandboxed` or `unsandboxed: agent code runs as you`. */
  readonly label: string;
}

/** What the panel needs of `GET resolve/api/health`. */
export interface IHealth {
  readonly ok: boolean;
  readonly providerName: string;
  readonly model: string;
  readonly problems: string[];
  /** `c.Resolve.allow_remote_images`; false unless the server says true. */
  readonly allowRemoteImages: boolean;
  /** null from a server that does not say (older servers) or says something else. */
  readonly sandbox: ISandbox | null;
}

const SANDBOX_LABELS: { readonly [kind in ISandbox['kind']]: string } = {
  bwrap: 'sandboxed',
  none: 'unsandboxed: agent code runs as you'
};

function validateSandbox(value: unknown): ISandbox | null {
  if (!isObject(value) || (value.kind !== 'bwrap' && value.kind !== 'none')) {
    return null;
  }
  // the label follows the kind (the two the contract names), so the header never shows
  // "sandboxed" for a server that said kind "none"
  return { kind: value.kind, label: SANDBOX_LABELS[value.kind] };
}

/** Check `GET resolve/api/health`. */
export function validateHealth(body: unknown): IHealth {
  if (!isObject(body)) {
    throw new ShapeError('health: expected an object');
  }
  const provider = isObject(body.provider) ? body.provider : {};
  const problems: string[] = [];
  if (Array.isArray(body.drift) && body.drift.length) {
    problems.push('tool lists drift: chat is refused until `jupyter resolve check` passes');
  } else if (isObject(body.drift) && Object.keys(body.drift).length) {
    problems.push('tool lists drift: chat is refused until `jupyter resolve check` passes');
  }
  return {
    ok: body.ok === true,
    providerName: String(provider.name ?? 'unknown'),
    model: String(provider.model ?? ''),
    problems,
    allowRemoteImages: body.allow_remote_images === true,
    sandbox: validateSandbox(body.sandbox)
  };
}

/** A soul (role) the agent can take. */
export interface ISoul {
  readonly name: string;
  readonly role: string;
  readonly description: string;
}

/** Check `GET resolve/api/souls` (`{souls: [...]}` or a bare list). */
export function validateSouls(body: unknown): ISoul[] {
  const list = Array.isArray(body) ? body : isObject(body) ? body.souls : null;
  if (!Array.isArray(list)) {
    throw new ShapeError('souls: expected {souls: [...]}');
  }
  return list
    .filter((s): s is Record<string, unknown> => isObject(s) && typeof s.name === 'string')
    .map(s => ({
      name: String(s.name),
      role: String(s.role ?? ''),
      description: String(s.description ?? '')
    }));
}

/** An artifact's manifest (DESIGN 3.7). */
export interface IArtifact {
  readonly id: string;
  readonly sha256: string;
  readonly media_type: string;
  readonly size: number;
  readonly title: string;
  readonly source: { readonly [key: string]: unknown };
  readonly created_by?: string;
  readonly created_at?: string | number;
  readonly [key: string]: unknown;
}

function toArtifact(a: Record<string, unknown>): IArtifact {
  return {
    ...a,
    id: String(a.id),
    sha256: String(a.sha256 ?? ''),
    media_type: String(a.media_type ?? a.mime ?? a.mime_type ?? 'application/octet-stream'),
    size: Number(a.size ?? 0),
    title: String(a.title ?? a.id),
    source: isObject(a.source) ? a.source : {}
  };
}

/** Check one artifact (`{artifact: {...}}` or a bare manifest). */
export function validateArtifact(body: unknown): IArtifact {
  const a = isObject(body) && isObject(body.artifact) ? body.artifact : body;
  if (!isObject(a) || typeof a.id !== 'string') {
    throw new ShapeError('artifact: expected a manifest with an id');
  }
  return toArtifact(a);
}

/** Check `GET resolve/api/artifacts`. */
export function validateArtifacts(body: unknown): IArtifact[] {
  const list = Array.isArray(body) ? body : isObject(body) ? body.artifacts : null;
  if (!Array.isArray(list)) {
    throw new ShapeError('artifacts: expected {artifacts: [...]}');
  }
  return list
    .filter((a): a is Record<string, unknown> => isObject(a) && typeof a.id === 'string')
    .map(toArtifact);
}
