/**
 * How `notebook.*` and `context.compacted` fold into a run's view: proposals shown in their
 * `notebook_propose` call's card, and compactions as quiet lines where they happened.
 */
import type { EventType, IEventData } from '../events';
import type { Fold, ICompaction } from '../run';
import { OPEN, tool } from './tools';

function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function compaction(d: IEventData): ICompaction {
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

type NotebookEvent = Extract<EventType, `notebook.${string}` | 'context.compacted'>;

/** The notebook and context family. */
export const NOTEBOOK_FOLDS: { readonly [T in NotebookEvent]: Fold } = {
  'context.compacted': (run, d) => {
    run.compaction = compaction(d);
    run.parts.push({ kind: 'compaction', compaction: run.compaction });
  },
  'notebook.proposal': (run, d) => {
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
  },
  'notebook.decision': (run, d) => {
    const proposal = run.proposals[String(d.proposal_id)];
    if (!proposal) {
      return;
    }
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
};
