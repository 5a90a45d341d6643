/**
 * The view of one run, folded from its events (pure: no I/O, no DOM). The panel renders it;
 * it is plain JSON so a live run can be cached and resumed after a reload.
 */
import {
  IInstructionFile,
  IMention,
  IProposedCell,
  IRunEvent,
  IRunInfo,
  MimeBundle
} from './validate';

/**
 * Where a tool call stands, and the words shown for it: the same table as the magics'
 * (jupyter_resolve/magics/view_model.py); tests/fixtures/runs/expected.json holds both to it.
 */
export const STATUS_LABELS = {
  requested: 'requested',
  waiting: 'waiting for approval',
  approved: 'approved',
  running: 'running…',
  done: 'done',
  error: 'failed',
  denied: 'denied',
  cancelled: 'cancelled',
  interrupted: 'interrupted'
} as const;

/** Where a tool call stands. */
export type ToolStatus = keyof typeof STATUS_LABELS;

const OPEN: readonly ToolStatus[] = ['requested', 'waiting', 'approved', 'running'];

/** The words shown for a call's status. */
export function statusLabel(status: ToolStatus): string {
  return STATUS_LABELS[status] ?? status;
}

/** A tool card. */
export interface IToolCall {
  callId: string;
  name: string;
  arguments: unknown;
  status: ToolStatus;
  approved: boolean;
  output: string;
  mime: MimeBundle | null;
  truncated: boolean;
  ms: number | null;
  /** Set on a `notebook_propose` call: the proposal it put in front of the person. */
  proposalId?: string;
}

/** Where a proposal stands: waiting for a person, decided, or closed by the run's end. */
export type ProposalStatus = 'waiting' | 'accepted' | 'rejected' | 'closed';

/** Cells the agent proposed for the person's notebook (`notebook.proposal`, DESIGN 9.2). */
export interface IProposal {
  proposalId: string;
  callId: string;
  notebook: string;
  cells: IProposedCell[];
  afterCellId: string | null;
  replaceCellId: string | null;
  /** The replaced cell's source in the saved notebook (the live model's wins when open). */
  replacedSource: string | null;
  note: string | null;
  status: ProposalStatus;
  /** From `notebook.decision`. */
  edited: boolean;
  ran: boolean;
  by: string | null;
  reason: string | null;
}

/** What `context.compacted` said: older context was elided or summarized to fit the model. */
export interface ICompaction {
  /** What was done, e.g. "elided 3 old tool outputs to fit 1000 tokens". */
  note: string;
  /** The model's summary of the dropped turns, when it differs from the note. */
  summary: string | null;
  beforeTokens: number | null;
  afterTokens: number | null;
  /** Turns dropped (summarized). */
  turns: number;
}

/** A piece of the answer, in arrival order. */
export type Part =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'tool'; callId: string }
  | { kind: 'step'; runId: string; soul: string }
  | { kind: 'compaction'; compaction: ICompaction };

/** One run as the panel shows it. */
export interface IRunView {
  runId: string;
  sessionId: string;
  /** What was asked: `run.started`'s prompt, or a task's goal ('' when the server kept none). */
  prompt: string;
  model: string;
  soul: string | null;
  budget: number | null;
  parts: Part[];
  tools: { [callId: string]: IToolCall };
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache (`usage.cached_tokens`, summed). */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (`usage.cache_write_tokens`, summed). */
  cacheWriteTokens: number;
  /** USD, when the model's prices are known: the sum of `usage.cost` (else the last `run_cost`). */
  cost: number | null;
  /** `run.started.budget.cost`: the run's cost budget in USD, when one is set. */
  costBudget: number | null;
  rounds: number | null;
  reason: string | null;
  summary: string | null;
  /**
   * The latest `context.compacted` (each is also a part, where it happened: before the first
   * round, or between rounds when the run's own outputs outgrew the window).
   */
  compaction: ICompaction | null;
  /** The variables the person mentioned, as the model was told them (`run.started`). */
  mentions: IMention[];
  /** The project instructions files the run read (`run.started.context`). */
  instructions: IInstructionFile[];
  /** Proposals by id (each shown in its `notebook_propose` call's card). */
  proposals: { [proposalId: string]: IProposal };
  errors: string[];
  startedAt: number;
  endedAt: number | null;
  lastEventId: number;
  /** Task mode: the role chain's steps (child runs), in order. */
  steps: { runId: string; soul: string; done: boolean }[];
  /** A task (role chain): every `run.started` opens a step; the stream's end ends the view. */
  task: boolean;
}

/** An empty view, before `run.started`. */
export function emptyRun(now: number = Date.now(), task = false): IRunView {
  return {
    runId: '',
    sessionId: '',
    prompt: '',
    model: '',
    soul: null,
    budget: null,
    parts: [],
    tools: {},
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cost: null,
    costBudget: null,
    rounds: null,
    reason: null,
    summary: null,
    compaction: null,
    mentions: [],
    instructions: [],
    proposals: {},
    errors: [],
    startedAt: now,
    endedAt: null,
    lastEventId: 0,
    steps: [],
    task
  };
}

function appendText(run: IRunView, kind: 'text' | 'reasoning', text: string): void {
  const last = run.parts[run.parts.length - 1];
  if (last && last.kind === kind) {
    last.text += text;
  } else {
    run.parts.push({ kind, text });
  }
}

function tool(run: IRunView, callId: string, name?: string): IToolCall {
  let call = run.tools[callId];
  if (!call) {
    call = {
      callId,
      name: name ?? 'tool',
      arguments: {},
      status: 'requested',
      approved: false,
      output: '',
      mime: null,
      truncated: false,
      ms: null
    };
    run.tools[callId] = call;
    run.parts.push({ kind: 'tool', callId });
  }
  if (name) {
    call.name = name;
  }
  return call;
}

/** True once the run (or, in a task, the whole chain) has ended. */
export function isFinished(run: IRunView): boolean {
  return run.endedAt !== null;
}

/**
 * Fold one event into the view (in place) and return it. A task stream (`task.started` first)
 * carries its child runs' events tagged with their role: each child's `run.started` opens a
 * step of the chain, its `run.completed` closes it, and `task.completed` ends the view.
 */
export function applyEvent(run: IRunView, event: IRunEvent, now: number = Date.now()): IRunView {
  const d = event.data;
  if (Number.isFinite(event.seq)) {
    run.lastEventId = Math.max(run.lastEventId, event.seq);
  }
  switch (event.type) {
    case 'task.started': {
      run.task = true;
      run.runId = String(d.task_id);
      run.sessionId = String(d.session_id ?? '');
      run.prompt = typeof d.goal === 'string' ? d.goal : '';
      run.steps = (d.chain ?? []).map(soul => ({ runId: '', soul: String(soul), done: false }));
      break;
    }
    case 'run.started': {
      if (run.task) {
        const soul = String(d.role ?? d.soul ?? 'step');
        const step = run.steps.find(s => !s.runId && s.soul === soul);
        if (step) {
          step.runId = d.run_id;
        } else {
          run.steps.push({ runId: d.run_id, soul, done: false });
        }
        run.parts.push({ kind: 'step', runId: d.run_id, soul });
        run.model = String(d.model ?? run.model);
        run.budget = (run.budget ?? 0) + (d.budget?.rounds ?? 0) || null;
        run.costBudget = finite(d.budget?.cost) ?? run.costBudget;
        break;
      }
      run.runId = d.run_id;
      run.sessionId = String(d.session_id ?? '');
      run.prompt = typeof d.prompt === 'string' ? d.prompt : '';
      run.model = String(d.model ?? '');
      run.soul = d.soul ?? null;
      run.budget = d.budget?.rounds ?? null;
      run.costBudget = finite(d.budget?.cost);
      run.mentions = d.mentions ?? [];
      run.instructions = d.context?.instructions ?? [];
      break;
    }
    case 'text.delta':
      appendText(run, 'text', String(d.text ?? ''));
      break;
    case 'reasoning.delta':
      appendText(run, 'reasoning', String(d.text ?? ''));
      break;
    case 'tool.requested': {
      const call = tool(run, String(d.call_id), d.name);
      call.arguments = d.arguments ?? {};
      break;
    }
    case 'tool.approval': {
      const call = tool(run, String(d.call_id), d.name);
      if (d.arguments !== undefined) {
        call.arguments = d.arguments;
      }
      if (d.state === 'waiting' || d.state === 'denied' || d.state === 'approved') {
        call.status = d.state;
      }
      if (d.state === 'approved') {
        call.approved = true;
      }
      break;
    }
    case 'tool.started':
      tool(run, String(d.call_id), d.name).status = 'running';
      break;
    case 'tool.completed': {
      const call = tool(run, String(d.call_id), d.name);
      // A denied call's result only tells the model so: the card stays denied.
      if (call.status !== 'denied') {
        call.status = d.ok ? 'done' : 'error';
      }
      call.output = String(d.output ?? '');
      call.mime = d.mime ?? null;
      call.truncated = Boolean(d.truncated);
      call.ms = typeof d.ms === 'number' ? d.ms : null;
      break;
    }
    case 'usage':
      foldUsage(run, d);
      break;
    case 'run.error':
      run.errors.push(d.code ? `${d.code}: ${d.message}` : String(d.message));
      break;
    case 'run.completed': {
      if (run.task) {
        const step = run.steps.find(s => s.runId === d.run_id);
        if (step) {
          step.done = true;
        }
        run.rounds = (run.rounds ?? 0) + Number(d.rounds ?? 0);
        if (d.summary && typeof d.summary.text === 'string' && d.summary.text) {
          run.summary = d.summary.text;
        }
        closeCalls(run, String(d.reason ?? ''));
        break;
      }
      run.reason = String(d.reason ?? '');
      if (typeof d.rounds === 'number') {
        run.rounds = d.rounds;
      }
      const summary = d.summary;
      if (summary && typeof summary.text === 'string') {
        run.summary = summary.text;
      } else if (typeof summary === 'string') {
        run.summary = summary;
      }
      run.endedAt = now;
      closeCalls(run, run.reason);
      break;
    }
    case 'context.compacted':
      run.compaction = compaction(d);
      run.parts.push({ kind: 'compaction', compaction: run.compaction });
      break;
    case 'notebook.proposal': {
      const proposalId = String(d.proposal_id);
      const call = tool(run, String(d.call_id), 'notebook_propose');
      call.proposalId = proposalId;
      // the call waits for a person, as an approval does (the magics fold it the same way)
      if (OPEN.includes(call.status)) {
        call.status = 'waiting';
      }
      run.proposals[proposalId] = {
        proposalId,
        callId: call.callId,
        notebook: String(d.notebook),
        cells: d.cells ?? [],
        afterCellId: d.after_cell_id ?? null,
        replaceCellId: d.replace_cell_id ?? null,
        replacedSource: d.replaced_source ?? null,
        note: d.note ?? null,
        status: 'waiting',
        edited: false,
        ran: false,
        by: null,
        reason: null
      };
      break;
    }
    case 'notebook.decision': {
      const proposal = run.proposals[String(d.proposal_id)];
      if (proposal) {
        // accepted: approved, then done with its result; rejected: denied, and stays so
        const call = run.tools[proposal.callId];
        if (call && OPEN.includes(call.status)) {
          call.status = d.decision === 'accepted' ? 'approved' : 'denied';
          call.approved = d.decision === 'accepted';
        }
        proposal.status = d.decision === 'accepted' ? 'accepted' : 'rejected';
        proposal.edited = d.edited === true;
        proposal.ran = d.ran === true;
        proposal.by = typeof d.by === 'string' ? d.by : null;
        proposal.reason = typeof d.reason === 'string' && d.reason ? d.reason : null;
      }
      break;
    }
    case 'task.completed':
      run.reason = String(d.reason ?? '');
      run.endedAt = now;
      closeCalls(run, run.reason);
      break;
  }
  return run;
}

/**
 * Calls still open (requested, waiting, approved, running) when their run ended: a run stopped
 * on purpose (a person's cancel, a used-up budget) cancelled them; one that ended any other way
 * (the runtime died, the server stopped) interrupted them.
 */
function closeCalls(run: IRunView, reason: string): void {
  const status = reason === 'cancelled' || reason === 'budget' ? 'cancelled' : 'interrupted';
  for (const call of Object.values(run.tools)) {
    if (OPEN.includes(call.status)) {
      call.status = status;
    }
  }
  // a proposal still waiting can no longer be decided: its call has ended
  for (const proposal of Object.values(run.proposals ?? {})) {
    if (proposal.status === 'waiting' && !OPEN.includes(run.tools[proposal.callId]?.status)) {
      proposal.status = 'closed';
    }
  }
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * Add one `usage` event: tokens and cache counts are summed; the cost is the sum of each
 * completion's `cost` (a task's steps each count from zero), or, from a server that sent only
 * the running total, the last `run_cost`. No price known: the cost stays null.
 */
function foldUsage(run: IRunView, d: IRunEvent['data']): void {
  run.promptTokens += finite(d.prompt_tokens) ?? 0;
  run.completionTokens += finite(d.completion_tokens) ?? 0;
  run.cachedTokens = (run.cachedTokens ?? 0) + (finite(d.cached_tokens) ?? 0);
  run.cacheWriteTokens = (run.cacheWriteTokens ?? 0) + (finite(d.cache_write_tokens) ?? 0);
  const cost = finite(d.cost);
  const total = finite(d.run_cost);
  if (cost !== null) {
    run.cost = (run.cost ?? 0) + cost;
  } else if (total !== null) {
    run.cost = total;
  }
}

/** `$0.0042`, as %resolve writes a cost. */
export function formatCost(usd: number): string {
  return `$${usd.toFixed(4)}`;
}

/**
 * The footer's tokens and cost, as %resolve shows them:
 * "1,234 tokens (900 cached, 50 written to cache) · $0.0042" (no cost when no price is known;
 * "of $0.50" when the run has a cost budget).
 */
export function usageLine(run: IRunView): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const cache = [
    [run.cachedTokens ?? 0, 'cached'],
    [run.cacheWriteTokens ?? 0, 'written to cache']
  ]
    .filter(([count]) => count)
    .map(([count, what]) => `${n(count as number)} ${what}`);
  let line = `${n(run.promptTokens + run.completionTokens)} tokens`;
  if (cache.length) {
    line += ` (${cache.join(', ')})`;
  }
  if (run.cost !== null && run.cost !== undefined) {
    line += ` · ${formatCost(run.cost)}`;
    if (run.costBudget) {
      line += ` of $${run.costBudget.toFixed(2)}`;
    }
  }
  return line;
}

function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function compaction(d: IRunEvent['data']): ICompaction {
  const note = typeof d.note === 'string' && d.note ? d.note : null;
  const summary = typeof d.summary === 'string' && d.summary ? d.summary : null;
  return {
    note: note ?? summary ?? 'older context compacted',
    summary: note && summary && summary !== note ? summary : null,
    beforeTokens: tokenCount(d.before_tokens),
    afterTokens: tokenCount(d.after_tokens),
    turns: tokenCount(d.turns) ?? 0
  };
}

/**
 * The quiet line a compaction shows, e.g.
 * "context compacted: 131,072 → 60,210 tokens · elided 3 old tool outputs to fit 100000 tokens".
 */
export function compactionLine(c: ICompaction): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const tokens =
    c.beforeTokens !== null && c.afterTokens !== null
      ? `${n(c.beforeTokens)} → ${n(c.afterTokens)} tokens · `
      : '';
  return `context compacted: ${tokens}${c.note}`;
}

/** Whether a proposal waits for this person's decision now. */
export function waitingProposals(run: IRunView): IProposal[] {
  return Object.values(run.proposals ?? {}).filter(p => p.status === 'waiting');
}

/** The words a decided proposal shows, e.g. "accepted (edited, ran)" or "rejected: too slow". */
export function decisionLabel(p: IProposal): string {
  if (p.status === 'waiting') {
    return 'waiting for your review';
  }
  if (p.status === 'closed') {
    return 'closed: the run ended before a decision';
  }
  const how = [p.edited ? 'edited' : '', p.ran ? 'ran' : ''].filter(Boolean);
  const by = p.by === 'timeout' ? ' (timed out)' : '';
  const reason = p.reason ? `: ${p.reason}` : '';
  return `${p.status}${how.length ? ` (${how.join(', ')})` : ''}${by}${reason}`;
}

/** The empty-run summary shown when the run ended with no answer text (null otherwise). */
export function emptySummary(run: IRunView): string | null {
  if (!isFinished(run) || run.parts.some(p => p.kind === 'text' && p.text.trim())) {
    return null;
  }
  return run.summary || `No answer (${run.reason}).`;
}

/** The text of the answer (what goes back as the assistant message in history). */
export function answerText(run: IRunView): string {
  return run.parts
    .filter((p): p is { kind: 'text'; text: string } => p.kind === 'text')
    .map(p => p.text)
    .join('');
}

/** Whether any call waits for a person's decision. */
export function waitingCalls(run: IRunView): IToolCall[] {
  return Object.values(run.tools).filter(c => c.status === 'waiting');
}

/** What a session shows as one turn: a run, or a task with all of its steps. */
export interface ISessionItem {
  readonly kind: 'run' | 'task';
  /** The run's or the task's id. */
  readonly id: string;
  /** Epoch seconds. */
  readonly startedAt: number;
  /** Epoch seconds: the run's end, or the end of the task's last step; null while live. */
  endedAt: number | null;
  live: boolean;
}

/** A session's runs as turns, in order: the steps of one task (same `task_id`) make one. */
export function sessionItems(runs: readonly IRunInfo[]): ISessionItem[] {
  const items: ISessionItem[] = [];
  const tasks = new Map<string, ISessionItem>();
  for (const r of [...runs].sort((a, b) => a.started_at - b.started_at)) {
    const live = r.status === 'running';
    if (!r.task_id) {
      items.push({ kind: 'run', id: r.run_id, startedAt: r.started_at, endedAt: r.ended_at, live });
      continue;
    }
    let task = tasks.get(r.task_id);
    if (!task) {
      task = { kind: 'task', id: r.task_id, startedAt: r.started_at, endedAt: null, live: false };
      tasks.set(r.task_id, task);
      items.push(task);
    }
    task.live = task.live || live;
    if (r.ended_at !== null && (task.endedAt === null || r.ended_at > task.endedAt)) {
      task.endedAt = r.ended_at;
    }
  }
  for (const task of tasks.values()) {
    if (task.live) {
      task.endedAt = null;
    }
  }
  return items;
}
