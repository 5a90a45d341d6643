/**
 * Deciding what waits for a person: a proposal (the server first, then the open notebook) or
 * a tool call (approve, deny). In a task both go to the chain's current step.
 */
import * as api from './api';
import { IProposedCell } from './events';
import {
  acceptedCells,
  diskChange,
  IRefusal,
  missingTarget,
  seenTarget,
  staleTarget,
  targetSource
} from './proposal';
import { describeError, ResolveRequestError } from './request';
import { IProposal, IRunView } from './run';
import { INotebookActions } from './tokens';

/** What a person decided on a proposal, as the card sends it. */
export interface IProposalChoice {
  readonly decision: 'accept' | 'reject';
  /** Accept and run: the server runs the accepted cells in the notebook's kernel. */
  readonly run?: boolean;
  /** The cells as edited before accepting (only when edited). */
  readonly cells?: IProposedCell[];
  readonly reason?: string;
  /** The replaced cell's source as the card's diff showed it (sent as `seen`, issue 40.2). */
  readonly shownTarget?: string | null;
}

/** The run a decision goes to: the run itself, or in a task the chain's current step. */
export function decidingRun(run: IRunView): string {
  return run.task ? (run.steps.find(s => s.runId && !s.done)?.runId ?? run.runId) : run.runId;
}

/**
 * Decide a proposal. Accepting opens the notebook first, then tells the server (which runs
 * the cells when asked), then inserts the accepted cells, with their outputs, into the open
 * notebook's model. Returns a notice for the person (the target cell was gone), else null.
 */
async function decideProposal(
  actions: INotebookActions | null,
  run: IRunView,
  proposal: IProposal,
  choice: IProposalChoice
): Promise<string | null> {
  const accept = choice.decision === 'accept';
  if (accept && !actions) {
    throw new Error('the notebook integration is not loaded');
  }
  // the page's own notebook (not shared) is what the card showed and what the cells replace
  const own = actions?.shared(proposal.notebook) === false;
  const seen = accept ? await seenTarget(proposal, choice.shownTarget ?? null, own) : null;
  if (accept) {
    await actions!.open(proposal.notebook, choice.run === true);
  }
  const stepRun = decidingRun(run);
  const id = proposal.proposalId;
  const answer = await api.decideProposal(stepRun, id, {
    decision: choice.decision,
    ...(choice.run ? { run: true } : {}),
    ...(choice.cells ? { cells: choice.cells } : {}),
    ...(choice.reason ? { reason: choice.reason } : {}),
    ...(seen ? { seen } : {})
  });
  if (answer.decision !== 'accepted' || !actions) {
    return null;
  }
  const cells = acceptedCells(
    choice.cells ?? proposal.cells,
    { run_id: stepRun, call_id: proposal.callId, proposal_id: id },
    answer.outputs,
    answer.execution_counts,
    answer.authorship
  );
  const placed = await actions.apply(proposal, cells);
  return placed.missing
    ? `Cell ${placed.missing} is no longer in ${proposal.notebook}: ` +
        'the accepted cells went at its end.'
    : null;
}

/** What a decision tells the chat: an error or a notice for its banner. */
export interface IDecisionReport {
  readonly error?: string;
  readonly notice?: string;
}

/** The decisions made from this panel: proposals (with the notebook) and waiting calls. */
export class Decisions {
  /** `report` puts an error or notice in the chat's banner; `changed` re-renders. */
  constructor(
    private readonly _report: (report: IDecisionReport) => void,
    private readonly _changed: () => void
  ) {}

  /** How proposals reach notebooks (set by the notebook plugin). */
  notebookActions: INotebookActions | null = null;
  /** Proposals being decided from here: proposal id → what is happening. */
  deciding: { readonly [proposalId: string]: string } = {};

  /**
   * What a 409 `stale_target` said each proposal's replaced cell reads now, and what the open
   * notebook held then (see {@link targetSource}).
   */
  stale: { [proposalId: string]: IRefusal } = {};

  /** The replaced cell's source in the open notebook, or null (not open, not a replacement). */
  liveSource(proposal: IProposal): string | null {
    if (!proposal.replaceCellId || !this.notebookActions) {
      return null;
    }
    return this.notebookActions.liveSource(proposal.notebook, proposal.replaceCellId);
  }

  /**
   * Follow a waiting replacement's cell in the open notebook: `changed` (the card re-renders,
   * its diff against the cell as it is now) on every change of its source. Returns what stops.
   */
  follow(proposal: IProposal, changed: () => void): () => void {
    if (!proposal.replaceCellId || !this.notebookActions) {
      return () => undefined;
    }
    return this.notebookActions.followSource(proposal.notebook, proposal.replaceCellId, changed);
  }

  /** The cell the proposal names that its notebook lacks (open here, or as the server read it). */
  missingTarget(proposal: IProposal): string | null {
    return missingTarget(proposal, this.notebookActions?.cellIds(proposal.notebook) ?? null);
  }

  /** Whether the proposal's notebook is open here as a shared document (null: not open). */
  private _shared(proposal: IProposal): boolean | null {
    return this.notebookActions?.shared(proposal.notebook) ?? null;
  }

  /** The source the card's diff shows the replaced cell as (null: the one the server read). */
  shownSource(proposal: IProposal): string | null {
    const stale = this.stale[proposal.proposalId] ?? null;
    return targetSource(this.liveSource(proposal), stale, this._shared(proposal));
  }

  /** The replaced cell as the saved file holds it, when someone saved it since (see diskChange). */
  diskSource(proposal: IProposal): string | null {
    const stale = this.stale[proposal.proposalId] ?? null;
    return diskChange(this.liveSource(proposal), stale, this._shared(proposal));
  }

  /** A 409 `stale_target`: the card shows the cell as the server now reads it. */
  private _refused(proposal: IProposal, error: ResolveRequestError): void {
    const current = staleTarget(error.body);
    this.stale = {
      ...this.stale,
      [proposal.proposalId]: { source: current?.source ?? null, live: this.liveSource(proposal) }
    };
    const gone = current !== null && current.source === null;
    const onDisk = this.diskSource(proposal) !== null;
    this._report({
      notice: gone
        ? error.message
        : onDisk
          ? 'The cell changed since you saw this diff: the saved file holds another version of ' +
            'it (saved elsewhere). Reload the notebook from disk, or save yours, then decide again.'
          : 'The cell changed since you saw this diff: check the diff as it is now and decide again.'
    });
  }

  /** Decide a proposal; the run's `notebook.decision` event then shows the decision. */
  async proposal(run: IRunView, proposal: IProposal, choice: IProposalChoice): Promise<void> {
    const id = proposal.proposalId;
    if (this.deciding[id]) {
      return;
    }
    const accept = choice.decision === 'accept';
    const doing = accept ? (choice.run ? 'running…' : 'accepting…') : 'rejecting…';
    this.deciding = { ...this.deciding, [id]: doing };
    this._changed();
    try {
      const notice = await decideProposal(this.notebookActions, run, proposal, choice);
      if (notice) {
        this._report({ notice });
      }
    } catch (error) {
      if (error instanceof ResolveRequestError && error.code === 'stale_target') {
        this._refused(proposal, error);
        return;
      }
      this._report({ error: describeError(error, accept ? 'Accept' : 'Reject') });
    } finally {
      const { [id]: _done, ...rest } = this.deciding;
      this.deciding = rest;
      this._changed();
    }
  }

  /** Approve or deny a waiting call (`always`: an external agent's, for good). */
  async call(
    run: IRunView,
    callId: string,
    decision: 'approve' | 'deny',
    always = false
  ): Promise<void> {
    try {
      // in a task, the call belongs to the chain's current step (a child run)
      await api.decide(decidingRun(run), callId, decision, always);
    } catch (error) {
      this._report({ error: describeError(error, 'Approval') });
      this._changed();
    }
  }
}
