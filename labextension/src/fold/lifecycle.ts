/**
 * How `run.*`, `task.*` and `usage` fold into a run's view: its start, errors, usage, the
 * messages a person steered it with (`run.message`, a part where it took effect) and end. A
 * task stream (`task.started` first) carries its child runs' events tagged with their role:
 * each child's `run.started` opens a step of the chain, its `run.completed` closes it, and
 * `task.completed` ends the view.
 */
import type { EventType, IEventData } from '../events';
import type { Fold, IRunView } from '../run';
import { OPEN } from './tools';

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * Calls still open (requested, waiting, approved, running) when their run ended: a run stopped
 * on purpose (a person's cancel, a used-up budget) cancelled them; one that ended any other way
 * (the runtime died, the server stopped) interrupted them.
 */
function closeCalls(run: IRunView, reason: string): void {
  run.writing = null;
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

/**
 * Add one `usage` event: tokens and cache counts are summed; the cost is the sum of each
 * completion's `cost` (a task's steps each count from zero), or, from a server that sent only
 * the running total, the last `run_cost`. No price known: the cost stays null.
 */
function foldUsage(run: IRunView, d: IEventData): void {
  run.promptTokens += finite(d.prompt_tokens) ?? 0;
  run.completionTokens += finite(d.completion_tokens) ?? 0;
  run.cachedTokens = (run.cachedTokens ?? 0) + (finite(d.cached_tokens) ?? 0);
  run.cacheWriteTokens = (run.cacheWriteTokens ?? 0) + (finite(d.cache_write_tokens) ?? 0);
  run.estimated = run.estimated || d.estimated === true;
  const cost = finite(d.cost);
  const total = finite(d.run_cost);
  if (cost !== null) {
    run.cost = (run.cost ?? 0) + cost;
  } else if (total !== null) {
    run.cost = total;
  }
}

/** A step of a task starts: the chain's next step of that role, or one more. */
function stepStarted(run: IRunView, d: IEventData): void {
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
}

/**
 * Steering messages the run ended before reading (`run.completed.undelivered_messages`), as one
 * line: the same words as `%resolve` (tests/fixtures/runs/expected.json holds both to them).
 */
function undelivered(run: IRunView, d: IEventData): void {
  const left = d.undelivered_messages;
  if (Array.isArray(left) && left.length) {
    const why = `the run ended (${String(d.reason ?? '?')}) before its next step`;
    run.errors.push(`${left.length} message(s) you sent did not reach the agent: ${why}`);
  }
}

/** A step of a task ends: its rounds count toward the task's, the chain goes on. */
function stepCompleted(run: IRunView, d: IEventData): void {
  const step = run.steps.find(s => s.runId === d.run_id);
  if (step) {
    step.done = true;
  }
  run.rounds = (run.rounds ?? 0) + Number(d.rounds ?? 0);
  if (d.summary && typeof d.summary.text === 'string' && d.summary.text) {
    run.summary = d.summary.text;
  }
  closeCalls(run, String(d.reason ?? ''));
  undelivered(run, d);
}

type LifecycleEvent = Extract<EventType, `run.${string}` | `task.${string}` | 'usage'>;

/** The lifecycle family. */
export const LIFECYCLE_FOLDS: { readonly [T in LifecycleEvent]: Fold } = {
  'task.started': (run, d) => {
    run.task = true;
    run.runId = String(d.task_id);
    run.sessionId = String(d.session_id ?? '');
    run.prompt = typeof d.goal === 'string' ? d.goal : '';
    run.steps = (d.chain ?? []).map(soul => ({ runId: '', soul: String(soul), done: false }));
  },
  'run.started': (run, d) => {
    if (run.task) {
      stepStarted(run, d);
      return;
    }
    run.runId = d.run_id;
    run.sessionId = String(d.session_id ?? '');
    run.prompt = typeof d.prompt === 'string' ? d.prompt : '';
    run.model = String(d.model ?? '');
    run.soul = d.soul ?? null;
    run.agent = typeof d.agent === 'string' && d.agent ? d.agent : null;
    run.budget = d.budget?.rounds ?? null;
    run.costBudget = finite(d.budget?.cost);
    run.mentions = d.mentions ?? [];
    run.instructions = d.context?.instructions ?? [];
  },
  usage: foldUsage,
  'run.error': (run, d) => {
    run.errors.push(d.code ? `${d.code}: ${d.message}` : String(d.message));
  },
  'run.completed': (run, d, now) => {
    if (run.task) {
      stepCompleted(run, d);
      return;
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
    undelivered(run, d);
  },
  'run.message': (run, d) => {
    run.parts.push({ kind: 'message', id: String(d.id ?? ''), text: String(d.text ?? '') });
  },
  'task.completed': (run, d, now) => {
    run.reason = String(d.reason ?? '');
    run.endedAt = now;
    closeCalls(run, run.reason);
  }
};
