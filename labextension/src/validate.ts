/**
 * The answers of the panel's REST endpoints (runs, health, souls, artifacts, variables,
 * proposals, transcripts), checked where they enter: the panel works with typed values only.
 * The run events are checked in events.ts.
 */
import { ILocalModel, IMcpServer, validateLocal, validateMcp } from './status';
import { Locked, validateLocked } from './hub';
import { isObject, ShapeError } from './shapes';

export { ShapeError } from './shapes';

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

/** The cursor of the page after this one of `GET resolve/api/runs` (null: the last page). */
export function validateNext(body: unknown): string | null {
  return isObject(body) && typeof body.next === 'string' && body.next ? body.next : null;
}

/** Whether agent code runs under the sandbox, as `/resolve/api/health` says. */
export interface ISandbox {
  readonly kind: 'bwrap' | 'none' | 'gateway';
  /** `sandboxed`, `unsandboxed: agent code runs as you`, or (scratch kernels on a Jupyter
   * gateway) `on the cluster: its isolation applies`. */
  readonly label: string;
}

/** What the panel needs of `GET resolve/api/health`. */
export interface IHealth {
  readonly ok: boolean;
  readonly providerName: string;
  readonly model: string;
  /** Whether the provider answered its last check (`provider.reachable`); null: not checked. */
  readonly reachable: boolean | null;
  /** Why it did not, in plain words (`provider.error`). */
  readonly providerError: string | null;
  /** The setting to change, e.g. `c.Resolve.base_url` (`provider.setting`). */
  readonly providerSetting: string | null;
  readonly problems: string[];
  /** `c.Resolve.allow_remote_images`; false unless the server says true. */
  readonly allowRemoteImages: boolean;
  /** null from a server that does not say (older servers) or says something else. */
  readonly sandbox: ISandbox | null;
  /** The configured MCP servers (`health.mcp`), by name; [] when none (or an older server). */
  readonly mcp: IMcpServer[];
  /** The local model server (`provider.local`), when the provider is `local`. */
  readonly local: ILocalModel | null;
  /** The settings the administrator's policy locks (`locked`, issue 37); {} when none. */
  readonly locked: Locked;
}

const SANDBOX_LABELS: { readonly [kind in ISandbox['kind']]: string } = {
  bwrap: 'sandboxed',
  none: 'unsandboxed: agent code runs as you',
  gateway: 'on the cluster: its isolation applies'
};

function validateSandbox(value: unknown): ISandbox | null {
  if (
    !isObject(value) ||
    typeof value.kind !== 'string' ||
    !Object.prototype.hasOwnProperty.call(SANDBOX_LABELS, value.kind)
  ) {
    return null;
  }
  const kind = value.kind as ISandbox['kind'];
  // the label follows the kind (the ones the contract names), so the header never shows
  // "sandboxed" for a server that said kind "none"
  return { kind, label: SANDBOX_LABELS[kind] };
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
    reachable: typeof provider.reachable === 'boolean' ? provider.reachable : null,
    providerError: typeof provider.error === 'string' && provider.error ? provider.error : null,
    providerSetting:
      typeof provider.setting === 'string' && provider.setting ? provider.setting : null,
    problems,
    allowRemoteImages: body.allow_remote_images === true,
    sandbox: validateSandbox(body.sandbox),
    mcp: validateMcp(body.mcp),
    local: validateLocal(provider),
    locked: validateLocked(body.locked)
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
  /** The person's name (`created_by` is the login: under token auth a random hex string). */
  readonly created_by_name?: string;
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

/** A variable of the kernel attached to a notebook (`GET resolve/api/notebook/variables`). */
export interface IVariable {
  readonly name: string;
  readonly type: string;
  readonly shape: number[] | null;
  readonly summary: string;
}

/** `GET resolve/api/notebook/variables?path=NB`: none while the notebook has no kernel. */
export interface IVariables {
  readonly notebook: string;
  readonly kernel: boolean;
  readonly variables: IVariable[];
}

/** Check the variables answer; entries without a name are dropped. */
export function validateVariables(body: unknown): IVariables {
  if (!isObject(body) || !Array.isArray(body.variables)) {
    throw new ShapeError('variables: expected {notebook, kernel, variables: [...]}');
  }
  return {
    notebook: String(body.notebook ?? ''),
    kernel: body.kernel === true,
    variables: body.variables
      .filter((v): v is Record<string, unknown> => isObject(v) && typeof v.name === 'string')
      .map(v => ({
        name: String(v.name),
        type: String(v.type ?? ''),
        shape:
          Array.isArray(v.shape) && v.shape.every(n => typeof n === 'number')
            ? (v.shape as number[])
            : null,
        summary: String(v.summary ?? '')
      }))
  };
}

/** An nbformat output, as the server returns those of cells it ran. */
export type NbOutput = { readonly output_type: string; readonly [key: string]: unknown };

/** The answer of `POST resolve/api/runs/{id}/proposals/{proposal_id}`. */
export interface IProposalAnswer {
  readonly proposal_id: string;
  readonly decision: 'accepted' | 'rejected';
  readonly edited: boolean;
  readonly ran: boolean;
  /** Per accepted cell, its outputs; null unless the cells ran. */
  readonly outputs: NbOutput[][] | null;
  readonly execution_counts: (number | null)[] | null;
  /** Accepted: each cell's `metadata.resolve` (who wrote it, who accepted it); null before. */
  readonly authorship: Record<string, unknown>[] | null;
}

/** Check a proposal decision's answer. */
export function validateProposalAnswer(body: unknown): IProposalAnswer {
  if (
    !isObject(body) ||
    typeof body.proposal_id !== 'string' ||
    (body.decision !== 'accepted' && body.decision !== 'rejected')
  ) {
    throw new ShapeError('proposal decision: expected {proposal_id, decision: accepted|rejected}');
  }
  const outputs = Array.isArray(body.outputs)
    ? body.outputs.map(list =>
        Array.isArray(list)
          ? list.filter(
              (o): o is NbOutput => isObject(o) && typeof o.output_type === 'string'
            )
          : []
      )
    : null;
  const counts = Array.isArray(body.execution_counts)
    ? body.execution_counts.map(n => (typeof n === 'number' ? n : null))
    : null;
  return {
    proposal_id: body.proposal_id,
    decision: body.decision,
    edited: body.edited === true,
    ran: body.ran === true,
    outputs,
    execution_counts: counts,
    authorship: Array.isArray(body.authorship) ? body.authorship.filter(isObject) : null
  };
}

/** A message of a session transcript (OpenAI chat shape). */
export interface ITranscriptMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  readonly tool_calls: { readonly id: string; readonly name: string; readonly arguments: string }[];
  readonly tool_call_id: string | null;
}

/** `GET resolve/api/sessions/{id}/transcript`. */
export interface ITranscript {
  readonly session_id: string;
  readonly messages: ITranscriptMessage[];
  readonly tokens_estimate: number;
}

const ROLES = ['system', 'user', 'assistant', 'tool'];

function contentText(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value)) {
    // content parts: the text ones joined, others named
    return value
      .map(part =>
        isObject(part) && typeof part.text === 'string'
          ? part.text
          : isObject(part)
            ? `[${String(part.type ?? 'part')}]`
            : ''
      )
      .join('');
  }
  return '';
}

/** Check a transcript; messages of another shape are dropped. */
export function validateTranscript(body: unknown): ITranscript {
  if (!isObject(body) || !Array.isArray(body.messages)) {
    throw new ShapeError('transcript: expected {session_id, messages: [...]}');
  }
  return {
    session_id: String(body.session_id ?? ''),
    tokens_estimate: typeof body.tokens_estimate === 'number' ? body.tokens_estimate : 0,
    messages: body.messages
      .filter((m): m is Record<string, unknown> => isObject(m) && ROLES.includes(m.role as string))
      .map(m => ({
        role: m.role as ITranscriptMessage['role'],
        content: contentText(m.content),
        tool_calls: (Array.isArray(m.tool_calls) ? m.tool_calls : [])
          .filter(isObject)
          .map(call => {
            const fn = isObject(call.function) ? call.function : {};
            const args = fn.arguments;
            return {
              id: String(call.id ?? ''),
              name: String(fn.name ?? call.name ?? 'tool'),
              arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {})
            };
          }),
        tool_call_id: typeof m.tool_call_id === 'string' ? m.tool_call_id : null
      }))
  };
}
