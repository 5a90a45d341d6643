/**
 * A `notebook_propose` card: each proposed cell as a diff against the cell it replaces (the
 * open notebook's source, else the saved one) or as new, with Accept, Accept and run, Edit and
 * Reject (with an optional reason). Everything from the model is shown as text.
 */
import * as React from 'react';
import { IDiffLine, lineDiff } from '../diff';
import { ChatModel } from '../model';
import { diffBases } from '../proposal';
import { decisionLabel, IProposal, IRunView } from '../run';
import { IProposedCell } from '../validate';

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
  const bases = diffBases(proposal, model.liveSource(proposal));
  const busy = model.deciding[proposal.proposalId] ?? null;
  const waiting = proposal.status === 'waiting';
  const edited = drafts.some((d, i) => d !== proposal.cells[i]?.source);
  const shown: IProposedCell[] = proposal.cells.map((c, i) => ({
    ...c,
    source: drafts[i] ?? c.source
  }));
  const hasCode = shown.some(c => c.cell_type === 'code');
  const accept = (run_: boolean) =>
    void model.decideProposal(run, proposal, {
      decision: 'accept',
      ...(run_ ? { run: true } : {}),
      ...(edited ? { cells: shown } : {})
    });
  const reject = () =>
    void model.decideProposal(run, proposal, {
      decision: 'reject',
      ...(reason.trim() ? { reason: reason.trim() } : {})
    });
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
      {shown.map((cell, i) => (
        <div
          key={i}
          className="jp-resolve-proposal-cell"
          data-kind={bases[i] !== null ? 'diff' : 'new'}
        >
          <div className="jp-resolve-proposal-cell-head">
            {bases[i] !== null ? 'changes' : 'new'} {cell.cell_type} cell
          </div>
          {editing && waiting ? (
            <textarea
              className="jp-resolve-proposal-edit"
              aria-label={`Source of proposed cell ${i + 1}`}
              value={drafts[i]}
              rows={Math.min(20, Math.max(3, drafts[i].split('\n').length + 1))}
              onChange={e => {
                const next = [...drafts];
                next[i] = e.target.value;
                setDrafts(next);
              }}
            />
          ) : (
            <Diff lines={lineDiff(bases[i] ?? '', cell.source)} />
          )}
        </div>
      ))}
      <div className="jp-resolve-proposal-status" aria-live="polite">
        {busy ?? decisionLabel(proposal)}
        {edited && waiting && !busy ? ' · edited' : ''}
      </div>
      {waiting && !busy && (
        <div className="jp-resolve-proposal-actions">
          <button
            className="jp-mod-styled jp-mod-accept jp-resolve-accept"
            onClick={() => accept(false)}
          >
            Accept
          </button>
          {hasCode && (
            <button
              className="jp-mod-styled jp-mod-accept jp-resolve-accept-run"
              onClick={() => accept(true)}
            >
              Accept and run
            </button>
          )}
          <button
            className="jp-mod-styled jp-resolve-edit"
            aria-pressed={editing}
            onClick={() => setEditing(!editing)}
          >
            {editing ? 'Show diff' : 'Edit'}
          </button>
          <button
            className="jp-mod-styled jp-mod-reject jp-resolve-reject"
            aria-expanded={rejecting}
            onClick={() => setRejecting(!rejecting)}
          >
            Reject…
          </button>
        </div>
      )}
      {waiting && !busy && rejecting && (
        <div className="jp-resolve-proposal-reject">
          <input
            className="jp-resolve-reject-reason"
            aria-label="Why (optional, the model is told)"
            placeholder="Why (optional, the model is told)"
            value={reason}
            onChange={e => setReason(e.target.value)}
            onKeyDown={e => {
              if (e.key === 'Enter') {
                e.preventDefault();
                reject();
              }
            }}
          />
          <button
            className="jp-mod-styled jp-mod-reject jp-resolve-reject-confirm"
            onClick={reject}
          >
            Reject
          </button>
        </div>
      )}
    </div>
  );
}
