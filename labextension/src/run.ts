/**
 * The view of one run, folded from its events (pure: no I/O, no DOM). The panel renders it;
 * it is plain JSON so a live run can be cached and resumed after a reload. Each family of
 * events folds in its own module under fold/; the words shown for a run are in labels.ts.
 */
import {
  EventType,
  IEventData,
  IInstructionFile,
  IMention,
  IProposedCell,
  IRunEvent,
  MimeBundle
} from './events';
import { LIFECYCLE_FOLDS } from './fold/lifecycle';
import { NOTEBOOK_FOLDS } from './fold/notebook';
import { TEXT_FOLDS } from './fold/text';
import { TOOL_FOLDS } from './fold/tools';

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
  /** The run the call belongs to (in a task, the step's run), for promoting its result. */
  runId?: string;
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
  | { kind: 'compaction'; compaction: ICompaction }
  /** A person's steering message, where it reached the model (`run.message`). */
  | { kind: 'message'; id: string; text: string };

/** One run as the panel shows it. */
export interface IRunView {
  runId: string;
  sessionId: string;
  /** What was asked: `run.started`'s prompt, or a task's goal ('' when the server kept none). */
  prompt: string;
  model: string;
  soul: string | null;
  /** `run.started.agent`: the external agent (issue 36) that answered, else null. */
  agent: string | null;
  budget: number | null;
  parts: Part[];
  tools: { [callId: string]: IToolCall };
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache (`usage.cached_tokens`, summed). */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (`usage.cache_write_tokens`, summed). */
  cacheWriteTokens: number;
  /** Some usage was counted by the gateway (`usage.estimated`): its tokens show with "≈". */
  estimated?: boolean;
  /**
   * A call the model is writing now (`tool.writing`): the tool and about how many tokens so
   * far; null once it is requested (its card shows it) or the run ended.
   */
  writing?: { name: string; tokens: number } | null;
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
    agent: null,
    budget: null,
    parts: [],
    tools: {},
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    estimated: false,
    writing: null,
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

/** True once the run (or, in a task, the whole chain) has ended. */
export function isFinished(run: IRunView): boolean {
  return run.endedAt !== null;
}

/** How one type of event changes a run's view (in place); `now` stamps the run's end. */
export type Fold = (run: IRunView, data: IEventData, now: number) => void;

/** Every event type's fold, by family: a type without one does not compile. */
const FOLDS: { readonly [T in EventType]: Fold } = {
  ...LIFECYCLE_FOLDS,
  ...TEXT_FOLDS,
  ...TOOL_FOLDS,
  ...NOTEBOOK_FOLDS
};

/**
 * Fold one event into the view (in place) and return it. A task stream (`task.started` first)
 * carries its child runs' events tagged with their role: each child's `run.started` opens a
 * step of the chain, its `run.completed` closes it, and `task.completed` ends the view.
 */
export function applyEvent(run: IRunView, event: IRunEvent, now: number = Date.now()): IRunView {
  if (Number.isFinite(event.seq)) {
    run.lastEventId = Math.max(run.lastEventId, event.seq);
  }
  FOLDS[event.type]?.(run, event.data, now);
  return run;
}

/** Whether a proposal waits for this person's decision now. */
export function waitingProposals(run: IRunView): IProposal[] {
  return Object.values(run.proposals ?? {}).filter(p => p.status === 'waiting');
}

/** Whether any call waits for a person's decision. */
export function waitingCalls(run: IRunView): IToolCall[] {
  return Object.values(run.tools).filter(c => c.status === 'waiting');
}
