/** How `tool.*` events fold into a run's view: one card per call, its status as it moves. */
import type { EventType } from '../events';
import type { Fold, IRunView, IToolCall, ToolStatus } from '../run';

/** The statuses of a call that has not ended yet. */
export const OPEN: readonly ToolStatus[] = ['requested', 'waiting', 'approved', 'running'];

/** The call's card, made (and placed in the answer) when first heard of. */
export function tool(run: IRunView, callId: string, name?: string): IToolCall {
  run.writing = null; // a call written (or running) shows as its card
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

function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * The tool family: writing (the model is still writing the call: no card yet), requested, approval (waiting, approved, denied), started, output (what the
 * call prints or displays while it runs, shown until its result replaces it), completed.
 */
export const TOOL_FOLDS: { readonly [T in Extract<EventType, `tool.${string}`>]: Fold } = {
  'tool.writing': (run, d) => {
    run.writing = { name: String(d.name ?? 'tool'), tokens: tokenCount(d.tokens) };
  },
  'tool.requested': (run, d) => {
    const call = tool(run, String(d.call_id), d.name);
    call.arguments = d.arguments ?? {};
  },
  'tool.approval': (run, d) => {
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
  },
  'tool.started': (run, d) => {
    tool(run, String(d.call_id), d.name).status = 'running';
  },
  'tool.output': (run, d) => {
    const call = tool(run, String(d.call_id), d.name);
    if (typeof d.text === 'string') {
      call.output += d.text;
    }
    if (d.mime) {
      call.mime = d.mime; // the newest display (an updated one replaces it too)
    }
  },
  'tool.completed': (run, d) => {
    const call = tool(run, String(d.call_id), d.name);
    call.runId = d.run_id;
    // A denied call's result only tells the model so: the card stays denied.
    if (call.status !== 'denied') {
      call.status = d.ok ? 'done' : 'error';
    }
    call.output = String(d.output ?? '');
    call.mime = d.mime ?? null;
    call.truncated = Boolean(d.truncated);
    call.ms = typeof d.ms === 'number' ? d.ms : null;
  }
};
