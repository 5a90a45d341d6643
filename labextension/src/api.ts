/** Typed calls of the `resolve/api/*` endpoints (DESIGN 3.5), all through request.ts. */
import { IAgent, IChatRequest, validateAgents } from './agents';
import { IProposedCell } from './events';
import { IUsage, validateUsage } from './hub';
import {
  IMcpToken,
  ISessionRow,
  validateIndexing,
  validateMcpTokens,
  validateNewMcpToken,
  validateSessions
} from './listings';
import { IListingPage, readPages } from './pages';
import { postJSON, requestJSON, requestRaw } from './request';
import { IStreamOptions, streamRun } from './sse';
import { queuedId } from './steer';
import { IModels, validateModels } from './status';
import {
  IArtifact,
  IHealth,
  IProposalAnswer,
  IRunInfo,
  ISoul,
  ITranscript,
  IVariables,
  validateArtifact,
  validateArtifacts,
  validateHealth,
  validateNext,
  validateProposalAnswer,
  validateRuns,
  validateSouls,
  validateTranscript,
  validateVariables
} from './validate';

export type { IChatMessage, IChatRequest } from './agents';

type StreamCallbacks = Omit<IStreamOptions, 'path' | 'init' | 'lastEventId'>;

/** Start a chat run and read its events. */
export function chat(body: IChatRequest, callbacks: StreamCallbacks): Promise<number> {
  return streamRun({
    ...callbacks,
    path: 'chat',
    init: {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' }
    }
  });
}

/** Start a task (the role chain: planner → specialist → evaluator → tool agent), read its events. */
export function task(
  body: {
    readonly goal: string;
    readonly session_id?: string;
    readonly chain?: string[];
    readonly model?: string;
  },
  callbacks: StreamCallbacks
): Promise<number> {
  return streamRun({
    ...callbacks,
    kind: 'task',
    path: 'tasks',
    init: {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' }
    }
  });
}

/** `POST resolve/api/tasks/{id}/cancel`. */
export async function cancelTask(taskId: string): Promise<void> {
  await postJSON(`tasks/${encodeURIComponent(taskId)}/cancel`, {});
}

/** Reattach to (or replay) a run from `lastEventId`. */
export function events(
  runId: string,
  lastEventId: number,
  callbacks: StreamCallbacks
): Promise<number> {
  return streamRun({
    ...callbacks,
    path: `runs/${encodeURIComponent(runId)}/events`,
    lastEventId
  });
}

/** Reattach to (or replay) a task — its own events and every step's — from `lastEventId`. */
export function taskEvents(
  taskId: string,
  lastEventId: number,
  callbacks: StreamCallbacks
): Promise<number> {
  return streamRun({
    ...callbacks,
    kind: 'task',
    path: `tasks/${encodeURIComponent(taskId)}/events`,
    lastEventId
  });
}

/** The most runs a page of `GET resolve/api/runs` holds (the server's largest page). */
const RUNS_PAGE = 200;

/**
 * `GET resolve/api/runs`, which the server pages newest first. A session's runs are read to the
 * last page, so each of its turns is there; every run's listing stops after `pages` pages.
 */
export function runs(sessionId?: string, pages = sessionId ? Infinity : 1): Promise<IRunInfo[]> {
  return readPages(async before => {
    const query = new URLSearchParams({ limit: String(RUNS_PAGE) });
    if (sessionId) {
      query.set('session_id', sessionId);
    }
    if (before) {
      query.set('before', before);
    }
    const body = await requestJSON(`runs?${query}`);
    return { rows: validateRuns(body), next: validateNext(body) };
  }, pages);
}

/** `GET resolve/api/runs?session_id=&status=running`: the session's live runs (one page). */
export async function runningRuns(sessionId: string): Promise<IRunInfo[]> {
  const query = new URLSearchParams({
    session_id: sessionId,
    status: 'running',
    limit: String(RUNS_PAGE)
  });
  return validateRuns(await requestJSON(`runs?${query}`));
}

/** The size of a page of the panel's Runs and Sessions tabs (the server's default). */
export const LIST_PAGE = 50;

function pageQuery(before: string | null, limit: number): URLSearchParams {
  const query = new URLSearchParams({ limit: String(limit) });
  if (before) {
    query.set('before', before);
  }
  return query;
}

/** One page of `GET resolve/api/runs`, newest first: the rows after the cursor `before`. */
export async function runsPage(
  before: string | null,
  limit = LIST_PAGE
): Promise<IListingPage<IRunInfo>> {
  const body = await requestJSON(`runs?${pageQuery(before, limit)}`);
  return { rows: validateRuns(body), next: validateNext(body), indexing: validateIndexing(body) };
}

/** One page of `GET resolve/api/sessions`, the session with the newest run first. */
export async function sessionsPage(
  before: string | null,
  limit = LIST_PAGE,
  stored: Parameters<typeof validateSessions>[1] = {}
): Promise<IListingPage<ISessionRow>> {
  const body = await requestJSON(`sessions?${pageQuery(before, limit)}`);
  return {
    rows: validateSessions(body, stored),
    next: validateNext(body),
    indexing: validateIndexing(body)
  };
}

/** `GET resolve/api/mcp-tokens`: the tokens made for MCP clients (never the tokens' values). */
export async function mcpTokens(): Promise<IMcpToken[]> {
  return validateMcpTokens(await requestJSON('mcp-tokens'));
}

/** `POST resolve/api/mcp-tokens`: a new token, its value in this answer only. */
export async function createMcpToken(name?: string): Promise<IMcpToken & { token: string }> {
  return validateNewMcpToken(await postJSON('mcp-tokens', name ? { name } : {}));
}

/** `DELETE resolve/api/mcp-tokens/{id}`: revoke a token. */
export async function revokeMcpToken(id: string): Promise<void> {
  await requestJSON(`mcp-tokens/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** `POST resolve/api/runs/{id}/cancel`. */
export async function cancel(runId: string): Promise<void> {
  await postJSON(`runs/${encodeURIComponent(runId)}/cancel`, {});
}

/**
 * `POST resolve/api/runs/{id}/messages` (a task's: `tasks/{id}/messages`): steer a live run;
 * the message's id, which its `run.message` carries once it reached the model.
 */
export async function steer(run: { runId: string; task: boolean }, text: string): Promise<string> {
  const path = `${run.task ? 'tasks' : 'runs'}/${encodeURIComponent(run.runId)}/messages`;
  return queuedId(await postJSON(path, { text }));
}

/**
 * `POST resolve/api/runs/{id}/approvals/{call_id}`; `always` (an external agent's call, issue
 * 36): the agent's "allow always" / "reject always", sent only then (older servers refuse it).
 */
export async function decide(
  runId: string,
  callId: string,
  decision: 'approve' | 'deny',
  always = false
): Promise<void> {
  await postJSON(
    `runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(callId)}`,
    { decision, ...(always ? { always: true } : {}) }
  );
}

/** `GET resolve/api/health`. */
export async function health(): Promise<IHealth> {
  return validateHealth(await requestJSON('health'));
}

/** `GET resolve/api/models`: what may be picked, and the default. */
export async function models(): Promise<IModels> {
  return validateModels(await requestJSON('models'));
}

/** `GET resolve/api/agents`: the external agents (issue 36). */
export async function agents(): Promise<IAgent[]> {
  return validateAgents(await requestJSON('agents'));
}

/** `GET resolve/api/usage`: this person's usage and budgets (issue 37). */
export async function usage(): Promise<IUsage> {
  return validateUsage(await requestJSON('usage'));
}

/** `GET resolve/api/souls`. */
export async function souls(): Promise<ISoul[]> {
  return validateSouls(await requestJSON('souls'));
}

/** `GET resolve/api/artifacts`. */
export async function artifacts(): Promise<IArtifact[]> {
  return validateArtifacts(await requestJSON('artifacts'));
}

/** `GET resolve/api/artifacts/{id}`. */
export async function artifact(id: string): Promise<IArtifact> {
  return validateArtifact(await requestJSON(`artifacts/${encodeURIComponent(id)}`));
}

/** `GET resolve/api/artifacts/{id}/content` as a Blob. */
export async function artifactContent(id: string): Promise<Blob> {
  const response = await requestRaw(`artifacts/${encodeURIComponent(id)}/content`);
  return response.blob();
}

/** `POST resolve/api/artifacts`: promote one notebook output, or one tool call's result. */
export async function promote(
  body: (
    | { readonly notebook: string; readonly cell_id: string; readonly output_index: number }
    | { readonly run_id: string; readonly call_id: string }
  ) & { readonly title?: string }
): Promise<IArtifact> {
  return validateArtifact(await postJSON('artifacts', body));
}

/** `GET resolve/api/notebook/variables?path=NB`: the variables of the notebook's kernel. */
export async function variables(notebook: string): Promise<IVariables> {
  return validateVariables(
    await requestJSON(`notebook/variables?path=${encodeURIComponent(notebook)}`)
  );
}

/** The body of `POST resolve/api/runs/{id}/proposals/{proposal_id}`. */
export interface IProposalDecision {
  readonly decision: 'accept' | 'reject';
  /** Run the accepted cells in the notebook's kernel (the server does, and returns outputs). */
  readonly run?: boolean;
  /** The cells as the person edited them before accepting. */
  readonly cells?: IProposedCell[];
  readonly reason?: string;
  /** The replaced cell as the person saw it; a 409 stale_target if it changed since. */
  readonly seen?: {
    readonly cell_id: string;
    readonly sha256: string;
    /** Without collaboration: the digest of the source the proposal carried. */
    readonly base_sha256?: string;
  };
}

/** `POST resolve/api/runs/{id}/proposals/{proposal_id}`. */
export async function decideProposal(
  runId: string,
  proposalId: string,
  body: IProposalDecision
): Promise<IProposalAnswer> {
  return validateProposalAnswer(
    await postJSON(
      `runs/${encodeURIComponent(runId)}/proposals/${encodeURIComponent(proposalId)}`,
      body
    )
  );
}

/** `GET resolve/api/sessions/{id}/transcript`. */
export async function transcript(sessionId: string): Promise<ITranscript> {
  return validateTranscript(
    await requestJSON(`sessions/${encodeURIComponent(sessionId)}/transcript`)
  );
}
