/**
 * What the server offers and how its parts stand, checked where they enter (pure: no I/O, no
 * DOM): the models a person may pick (`GET resolve/api/models`, issue 19) and the MCP servers'
 * health (`GET resolve/api/health` `mcp`, issue 18).
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A model the provider offers (or the configuration names). */
export interface IModelOption {
  readonly id: string;
  /** A display name, when the provider gives one. */
  readonly name: string | null;
  /** False for an allowed model the provider did not list (or could not: see `error`). */
  readonly listed: boolean;
}

/** `GET resolve/api/models`. */
export interface IModels {
  readonly provider: string;
  /** The model a chat that names none runs with. */
  readonly default: string;
  /** `c.Resolve.allowed_models`; null when any model may be asked for. */
  readonly allowed: string[] | null;
  readonly models: IModelOption[];
  /** `provider`: the provider's own list; `config`: the configured names (see `error`). */
  readonly source: 'provider' | 'config';
  readonly cached: boolean;
  /** Why the provider's list is missing (then the models are the configured names). */
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** A shape error in a status answer. */
export class StatusShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

/** Check the models answer; entries without an id are dropped, duplicates kept once. */
export function validateModels(body: unknown): IModels {
  if (!isObject(body) || !Array.isArray(body.models)) {
    throw new StatusShapeError('models: expected {provider, default, models: [...]}');
  }
  const seen = new Set<string>();
  const models: IModelOption[] = [];
  for (const m of body.models) {
    if (!isObject(m) || typeof m.id !== 'string' || !m.id || seen.has(m.id)) {
      continue;
    }
    seen.add(m.id);
    models.push({
      id: m.id,
      name: typeof m.name === 'string' && m.name && m.name !== m.id ? m.name : null,
      listed: m.listed !== false
    });
  }
  const error = isObject(body.error)
    ? { code: String(body.error.code ?? 'error'), message: String(body.error.message ?? '') }
    : null;
  return {
    provider: String(body.provider ?? ''),
    default: typeof body.default === 'string' ? body.default : '',
    allowed: Array.isArray(body.allowed)
      ? body.allowed.filter((a): a is string => typeof a === 'string')
      : null,
    models,
    source: body.source === 'config' ? 'config' : 'provider',
    cached: body.cached === true,
    error
  };
}

/**
 * The model the picker shows: the one remembered (when it may still be asked for), else the
 * server's default ('' means "the default": no `model` in the chat body).
 */
export function pickedModel(models: IModels | null, remembered: string | null): string {
  if (!remembered) {
    return '';
  }
  if (!models) {
    return remembered; // not loaded yet: keep the choice; the server judges it
  }
  if (remembered === models.default) {
    return '';
  }
  const known = models.models.some(m => m.id === remembered);
  const allowed = models.allowed === null || models.allowed.includes(remembered);
  return known && allowed ? remembered : '';
}

/** A quiet note under the picker when the provider's list is missing, else null. */
export function modelsNote(models: IModels | null): string | null {
  if (!models?.error) {
    return null;
  }
  const what = models.allowed ? 'the allowed models' : 'the configured model';
  const why = models.error.message || models.error.code;
  return `${models.provider || 'The provider'} did not list its models (${why}); showing ${what}.`;
}

/** Where an MCP server stands (jupyter_resolve/mcp). */
export type McpState = 'idle' | 'starting' | 'ready' | 'failed' | 'stopped';

const MCP_STATES: readonly McpState[] = ['idle', 'starting', 'ready', 'failed', 'stopped'];

/** One configured MCP server, as the health answer describes it. */
export interface IMcpServer {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  /** The program (stdio) or the URL (http): where it runs. */
  readonly target: string;
  readonly state: McpState;
  /** Its tools' names, once listed; null before (or when it failed to start). */
  readonly tools: string[] | null;
  /** How many times it was started. */
  readonly starts: number;
  readonly error: string | null;
  /** The end of its stderr (already redacted by the server): text, shown as text. */
  readonly stderrTail: string;
}

/** The servers of `health.mcp`, by name; an entry of another shape is dropped. */
export function validateMcp(value: unknown): IMcpServer[] {
  if (!isObject(value)) {
    return [];
  }
  return Object.entries(value)
    .filter((entry): entry is [string, Record<string, unknown>] => isObject(entry[1]))
    .map(([name, s]) => ({
      name,
      transport: s.transport === 'http' ? ('http' as const) : ('stdio' as const),
      target: String((s.transport === 'http' ? s.url : s.command) ?? ''),
      state: MCP_STATES.includes(s.state as McpState) ? (s.state as McpState) : 'idle',
      tools: Array.isArray(s.tools)
        ? s.tools.filter((t): t is string => typeof t === 'string')
        : null,
      starts: typeof s.starts === 'number' && Number.isFinite(s.starts) ? s.starts : 0,
      error: typeof s.error === 'string' && s.error ? s.error : null,
      stderrTail: typeof s.stderr_tail === 'string' ? s.stderr_tail : ''
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The words of a server's row, e.g. "ready · 2 tools" or "failed (restarts on its next call)". */
export function mcpSummary(server: IMcpServer): string {
  switch (server.state) {
    case 'ready': {
      const n = server.tools?.length ?? 0;
      return `ready · ${n} tool${n === 1 ? '' : 's'}`;
    }
    case 'failed':
      return 'failed (restarts on its next call)';
    case 'idle':
      return 'idle (starts on its first call)';
    case 'starting':
      return 'starting…';
    case 'stopped':
      return 'stopped';
  }
}

/** Where the supervised llama.cpp server stands (`c.Resolve.provider = "local"`, issue 34). */
export type LocalState = 'idle' | 'starting' | 'ready' | 'failed';

const LOCAL_STATES: readonly LocalState[] = ['idle', 'starting', 'ready', 'failed'];

/** `health.provider.local`: the local model the gateway runs itself. */
export interface ILocalModel {
  /** The GGUF file's path ('' when none is configured). */
  readonly modelFile: string;
  /** Its size in bytes; null when the file is missing. */
  readonly sizeBytes: number | null;
  /** The context window, in tokens; null when unknown. */
  readonly context: number | null;
  readonly state: LocalState;
  /** How many times it was started. */
  readonly starts: number;
  /** Why it cannot run (a missing GGUF, a crash), as text. */
  readonly error: string | null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** `provider.local` of a health answer, or null (another provider, or another shape). */
export function validateLocal(provider: unknown): ILocalModel | null {
  const local = isObject(provider) ? provider.local : null;
  if (!isObject(local)) {
    return null;
  }
  return {
    modelFile: typeof local.model_file === 'string' ? local.model_file : '',
    sizeBytes: count(local.size_bytes),
    context: count(local.context),
    state: LOCAL_STATES.includes(local.state as LocalState) ? (local.state as LocalState) : 'idle',
    starts: count(local.starts) ?? 0,
    error: typeof local.error === 'string' && local.error ? local.error : null
  };
}

/** A size in bytes as people read it, e.g. "469 MB". */
export function byteSize(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) {
    return `${value} bytes`;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** The header's words for a local model, e.g. "qwen.gguf · 469 MB · 8,192 tokens · ready". */
export function localSummary(local: ILocalModel): string {
  const file = local.modelFile.split(/[\\/]/).pop() || 'no model file';
  const size = local.sizeBytes === null ? 'file missing' : byteSize(local.sizeBytes);
  const context = local.context === null ? null : `${local.context.toLocaleString('en-US')} tokens`;
  const state = local.state === 'idle' ? 'idle (starts on first use)' : local.state;
  return [file, size, context, state].filter(Boolean).join(' · ');
}
