/**
 * A `notebook_propose` card: each proposed cell as a diff against the cell it replaces (the
 * open notebook's source, else the saved one) or as new, with Accept, Accept and run, Edit and
 * Reject (with an optional reason). Everything from the model is shown as text.
 */
import * as React from 'react';
import { IDiffLine } from '../diff';
import { IProposedCell } from '../events';
import { decisionLabel } from '../labels';
import { ChatModel } from '../model';
import { cardDiffs, diffBases } from '../proposal';
import { IProposal, IRunView } from '../run';

const DIFF_CLASS = {
  '+': 'jp-resolve-diff-add',
  '-': 'jp-resolve-diff-del',
  ' ': 'jp-resolve-diff-same'
} as const;

function Diff(props: { readonly lines: IDiffLine[] }): JSX.Element {
  return (
    <pre className="jp-resolve-diff" aria-label="diff">
      {props.lines.map((line, i) => (
        <div key={i} className={DIFF_CLASS[line.op]}>
          <span className="jp-resolve-diff-op" aria-hidden="true">
            {line.op}
          </span>
          {line.text || ' '}
        </div>
      ))}
    </pre>
  );
}

function where(p: IProposal): string {
  if (p.replaceCellId) {
    return `replacing cell ${p.replaceCellId}`;
  }
  return p.afterCellId ? `after cell ${p.afterCellId}` : 'at the end';
}

/** One proposed cell: a diff against its base (or all new), or its source while editing. */
function ProposedCell(props: {
  readonly cell: IProposedCell;
  readonly index: number;
  readonly base: string | null;
  readonly diff: IDiffLine[];
  readonly editing: boolean;
  readonly onEdit: (source: string) => void;
}): JSX.Element {
  const { cell, index, base } = props;
  return (
    <div className="jp-resolve-proposal-cell" data-kind={base !== null ? 'diff' : 'new'}>
      <div className="jp-resolve-proposal-cell-head">
        {base !== null ? 'changes' : 'new'} {cell.cell_type} cell
      </div>
      {props.editing ? (
        <textarea
          className="jp-resolve-proposal-edit"
          aria-label={`Source of proposed cell ${index + 1}`}
          value={cell.source}
          rows={Math.min(20, Math.max(3, cell.source.split('\n').length + 1))}
          onChange={e => props.onEdit(e.target.value)}
        />
      ) : (
        <Diff lines={props.diff} />
      )}
    </div>
  );
}

/** Accept, Accept and run (when there is code), Edit / Show diff, Reject…. */
function ProposalActions(props: {
  readonly hasCode: boolean;
  readonly editing: boolean;
  readonly rejecting: boolean;
  readonly accept: (run: boolean) => void;
  readonly toggleEditing: () => void;
  readonly toggleRejecting: () => void;
}): JSX.Element {
  return (
    <div className="jp-resolve-proposal-actions">
      <button
        className="jp-mod-styled jp-mod-accept jp-resolve-accept"
        onClick={() => props.accept(false)}
      >
        Accept
      </button>
      {props.hasCode && (
        <button
          className="jp-mod-styled jp-mod-accept jp-resolve-accept-run"
          onClick={() => props.accept(true)}
        >
          Accept and run
        </button>
      )}
      <button
        className="jp-mod-styled jp-resolve-edit"
        aria-pressed={props.editing}
        onClick={props.toggleEditing}
      >
        {props.editing ? 'Show diff' : 'Edit'}
      </button>
      <button
        className="jp-mod-styled jp-mod-reject jp-resolve-reject"
        aria-expanded={props.rejecting}
        onClick={props.toggleRejecting}
      >
        Reject…
      </button>
    </div>
  );
}

/** Why the proposal is rejected (optional; the model is told), and the button that rejects. */
function RejectReason(props: {
  readonly reason: string;
  readonly setReason: (reason: string) => void;
  readonly reject: () => void;
}): JSX.Element {
  return (
    <div className="jp-resolve-proposal-reject">
      <input
        className="jp-resolve-reject-reason"
        aria-label="Why (optional, the model is told)"
        placeholder="Why (optional, the model is told)"
        value={props.reason}
        onChange={e => props.setReason(e.target.value)}
        onKeyDown={e => {
          if (e.key === 'Enter') {
            e.preventDefault();
            props.reject();
          }
        }}
      />
      <button
        className="jp-mod-styled jp-mod-reject jp-resolve-reject-confirm"
        onClick={props.reject}
      >
        Reject
      </button>
    </div>
  );
}

/**
 * The bases and diffs of a card. While it waits, the diff follows the replaced cell in the open
 * notebook (issue 40.2): each change of its source re-renders the card against it.
 */
function useFollowedDiffs(
  model: ChatModel,
  proposal: IProposal,
  waiting: boolean,
  shown: readonly IProposedCell[]
): { bases: (string | null)[]; diffs: IDiffLine[][]; disk: IDiffLine[] | null } {
  const [, followed] = React.useReducer((n: number) => n + 1, 0);
  React.useEffect(
    () => (waiting ? model.decisions.follow(proposal, followed) : undefined),
    [model, proposal.proposalId, waiting]
  );
  const target = model.decisions.shownSource(proposal);
  const sources = shown.map(c => c.source);
  const diffs = React.useMemo(
    () => cardDiffs(proposal, target, sources),
    [proposal, target, sources.join('\u0000')]
  );
  const saved = model.decisions.diskSource(proposal);
  const disk = saved === null ? null : cardDiffs(proposal, saved, sources.slice(0, 1))[0];
  return { bases: diffBases(proposal, target), diffs, disk };
}

/**
 * Without collaboration, after a refused Accept: the saved file's cell is not the one this
 * page holds (someone saved it since). Its diff, and what to do first; an Accept meanwhile is
 * refused again, never replacing a cell other than the one the card shows.
 */
function DiskChange(props: { readonly diff: IDiffLine[] }): JSX.Element {
  return (
    <div className="jp-resolve-proposal-disk" role="note">
      <div className="jp-resolve-proposal-cell-head">
        The file on disk changed since this proposal was made (saved from another page, or an
        earlier save of yours): reload the notebook from disk to decide on its cell, or save
        yours first. Against the file, the diff reads:
      </div>
      <Diff lines={props.diff} />
    </div>
  );
}

/** The cell the proposal names that its notebook lacks (issue 46.6), flagged before a decision. */
function MissingTarget(props: {
  readonly model: ChatModel;
  readonly proposal: IProposal;
}): JSX.Element | null {
  const missing = props.model.decisions.missingTarget(props.proposal);
  return missing ? (
    <div className="jp-resolve-proposal-missing" role="alert">
      {props.proposal.notebook} has no cell {missing}: accepted, these cells would go at its end.
      Reject it with a reason, or look at the notebook first.
    </div>
  ) : null;
}

/** A `notebook_propose` card, with the decision the person makes on it. */
export function ProposalCard(props: {
  readonly model: ChatModel;
  readonly run: IRunView;
  readonly proposal: IProposal;
}): JSX.Element {
  const { model, run, proposal } = props;
  const [editing, setEditing] = React.useState(false);
  const [drafts, setDrafts] = React.useState<string[]>(() => proposal.cells.map(c => c.source));
  const [rejecting, setRejecting] = React.useState(false);
  const [reason, setReason] = React.useState('');
  const busy = model.decisions.deciding[proposal.proposalId] ?? null;
  const waiting = proposal.status === 'waiting';
  const edited = drafts.some((d, i) => d !== proposal.cells[i]?.source);
  const shown: IProposedCell[] = proposal.cells.map((c, i) => ({
    ...c,
    source: drafts[i] ?? c.source
  }));
  const { bases, diffs, disk } = useFollowedDiffs(model, proposal, waiting, shown);
  const accept = (run_: boolean) =>
    void model.decisions.proposal(run, proposal, {
      decision: 'accept',
      ...(run_ ? { run: true } : {}),
      ...(edited ? { cells: shown } : {}),
      shownTarget: bases[0] ?? null
    });
  const reject = () =>
    void model.decisions.proposal(run, proposal, {
      decision: 'reject',
      ...(reason.trim() ? { reason: reason.trim() } : {})
    });
  const edit = (i: number, source: string) => {
    const next = [...drafts];
    next[i] = source;
    setDrafts(next);
  };
  return (
    <div
      className={`jp-resolve-proposal jp-mod-${proposal.status}`}
      data-proposal-id={proposal.proposalId}
      role="group"
      aria-label={`Proposed cells for ${proposal.notebook}`}
    >
      <div className="jp-resolve-proposal-title">
        {proposal.cells.length === 1 ? 'A cell' : `${proposal.cells.length} cells`} for{' '}
        <code>{proposal.notebook}</code>, {where(proposal)}
      </div>
      {proposal.note && <div className="jp-resolve-proposal-note">{proposal.note}</div>}
      {waiting && <MissingTarget model={model} proposal={proposal} />}
      {shown.map((cell, i) => (
        <ProposedCell
          key={i}
          cell={cell}
          index={i}
          base={bases[i]}
          diff={diffs[i]}
          editing={editing && waiting}
          onEdit={source => edit(i, source)}
        />
      ))}
      {waiting && disk && <DiskChange diff={disk} />}
      <div className="jp-resolve-proposal-status" aria-live="polite">
        {busy ?? decisionLabel(proposal)}
        {edited && waiting && !busy ? ' · edited' : ''}
      </div>
      {waiting && !busy && (
        <ProposalActions
          hasCode={shown.some(c => c.cell_type === 'code')}
          editing={editing}
          rejecting={rejecting}
          accept={accept}
          toggleEditing={() => setEditing(!editing)}
          toggleRejecting={() => setRejecting(!rejecting)}
        />
      )}
      {waiting && !busy && rejecting && (
        <RejectReason reason={reason} setReason={setReason} reject={reject} />
      )}
    </div>
  );
}
