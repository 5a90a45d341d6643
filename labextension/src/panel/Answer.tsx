/**
 * An answer: its parts in arrival order (text, reasoning, tool cards, steps, the messages that
 * steered it), what was sent to it and not read yet, errors, footer.
 */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';
import { compactionLine, emptySummary, usageLine, writingLine } from '../labels';
import { ChatModel } from '../model';
import { plainErrors, reasonLabel, summaryWithoutShownErrors } from '../plain';
import { ICompaction, IRunView } from '../run';
import { steerNote, steerState } from '../steer';
import { ITurn } from '../turn';
import { ProposalCard } from './Proposal';
import { Markdown } from './Rendered';
import { ToolCard } from './ToolCard';

function useTicker(active: boolean): void {
  const [, setTick] = React.useState(0);
  React.useEffect(() => {
    if (!active) {
      return;
    }
    const id = window.setInterval(() => setTick(t => t + 1), 1000);
    return () => window.clearInterval(id);
  }, [active]);
}

function Footer(props: { readonly run: IRunView; readonly live: boolean }): JSX.Element {
  const { run } = props;
  useTicker(props.live);
  const end = run.endedAt ?? Date.now();
  const seconds = Math.max(0, (end - run.startedAt) / 1000);
  const tokens = run.promptTokens + run.completionTokens;
  return (
    <div className="jp-resolve-footer" aria-label="run summary">
      <span title="rounds used of the budget">
        rounds {run.rounds ?? '…'}
        {run.budget ? `/${run.budget}` : ''}
      </span>
      <span
        className="jp-resolve-usage"
        title={
          `prompt ${run.promptTokens}, completion ${run.completionTokens}` +
          (tokens ? '' : ' (the provider reported none)') +
          (run.estimated ? ' (≈: the server sent no usage; counted about four characters a token)' : '')
        }
      >
        {usageLine(run)}
      </span>
      <span>{seconds.toFixed(1)} s</span>
      {run.reason && (
        <span className={`jp-resolve-reason-${run.reason}`}>{reasonLabel(run.reason)}</span>
      )}
    </div>
  );
}

/** A compaction, as a quiet line: tokens before and after, what was done; a summary folded. */
function Compaction(props: { readonly compaction: ICompaction }): JSX.Element {
  const c = props.compaction;
  return (
    <div className="jp-resolve-compaction" role="note">
      <span>{compactionLine(c)}</span>
      {c.summary && (
        <details>
          <summary>Summary of the earlier turns</summary>
          <div className="jp-resolve-compaction-summary">{c.summary}</div>
        </details>
      )}
    </div>
  );
}

function Steps(props: { readonly run: IRunView }): JSX.Element | null {
  if (!props.run.steps.length) {
    return null;
  }
  return (
    <ol className="jp-resolve-steps" aria-label="role chain">
      {props.run.steps.map((step, i) => (
        <li
          key={i}
          className={step.done ? 'jp-mod-done' : step.runId ? 'jp-mod-active' : 'jp-mod-pending'}
        >
          {step.soul}
        </li>
      ))}
    </ol>
  );
}

/**
 * While the run is live and nothing shows yet: "Thinking…"; while the model writes a tool call
 * (which can take a minute on a small local model): which tool and about how many tokens.
 */
function Pending(props: { readonly run: IRunView; readonly live: boolean }): JSX.Element | null {
  if (!props.live) {
    return null;
  }
  const writing = writingLine(props.run);
  if (writing) {
    return <div className="jp-resolve-pending jp-resolve-writing">{writing}</div>;
  }
  return props.run.parts.every(p => p.kind === 'compaction') ? (
    <div className="jp-resolve-pending">Thinking…</div>
  ) : null;
}

/** A person's message, where it reached the model (`run.message`). */
function Steered(props: { readonly text: string }): JSX.Element {
  return (
    <div className="jp-resolve-steer" aria-label="your message, read at this step">
      <span className="jp-resolve-steer-label">↪ you, at this step:</span> {props.text}
    </div>
  );
}

/** Messages sent from here to this run that its answer does not show (yet): where each stands. */
function SteerNotes(props: { readonly model: ChatModel; readonly run: IRunView }): JSX.Element {
  const { run } = props;
  return (
    <>
      {props.model.steering.pending(run).map(item => {
        const state = steerState(item, run);
        return (
          <div
            key={item.key}
            className={`jp-resolve-steer jp-resolve-steer-${state}`}
            aria-label={`your message, ${state}`}
          >
            <span className="jp-resolve-steer-label">↪ {steerNote(state, item.error)}</span>{' '}
            {item.text}
          </div>
        );
      })}
    </>
  );
}

/** A tool call's card (a proposal's cells in it), decided from here. */
function ToolPart(props: {
  readonly model: ChatModel;
  readonly rendermime: IRenderMimeRegistry;
  readonly run: IRunView;
  readonly callId: string;
}): JSX.Element {
  const { run } = props;
  const call = run.tools[props.callId];
  const proposal = call.proposalId ? run.proposals?.[call.proposalId] : undefined;
  return (
    <ToolCard
      call={call}
      rendermime={props.rendermime}
      onDecide={(d, always) => void props.model.decisions.call(run, call.callId, d, always)}
      always={!!run.agent}
    >
      {proposal && <ProposalCard model={props.model} run={run} proposal={proposal} />}
    </ToolCard>
  );
}

/** One run's answer, as it streams and once it has ended. */
export function Answer(props: {
  readonly model: ChatModel;
  readonly rendermime: IRenderMimeRegistry;
  readonly turn: ITurn;
  readonly live: boolean;
}): JSX.Element {
  const { run } = props.turn;
  // provider errors once, in plain words; the summary under them need not repeat them
  const errors = plainErrors(run.errors);
  const empty = emptySummary(run);
  const summary = empty && summaryWithoutShownErrors(empty, errors);
  return (
    <div className="jp-resolve-message jp-resolve-assistant" data-run-id={run.runId}>
      {run.agent && (
        <div
          className="jp-resolve-agent-label"
          title={
            'An external agent answered: its own tools (shell, network) are outside ' +
            "this server's control"
          }
        >
          external agent · <span className="jp-resolve-agent-name">{run.agent}</span>
        </div>
      )}
      <Steps run={run} />
      {run.parts.map((part, i) => {
        switch (part.kind) {
          case 'text':
            return <Markdown key={i} rendermime={props.rendermime} text={part.text} />;
          case 'reasoning':
            return props.model.settings.showReasoning ? (
              <details key={i} className="jp-resolve-reasoning">
                <summary>Reasoning</summary>
                <div>{part.text}</div>
              </details>
            ) : null;
          case 'compaction':
            return <Compaction key={i} compaction={part.compaction} />;
          case 'step':
            return (
              <div key={i} className="jp-resolve-step-title">
                {part.soul}
              </div>
            );
          case 'message':
            return <Steered key={i} text={part.text} />;
          case 'tool':
            return <ToolPart key={i} {...props} run={run} callId={part.callId} />;
        }
      })}
      <SteerNotes model={props.model} run={run} />
      <Pending run={run} live={props.live} />
      {errors.map((e, i) => (
        <div key={`e${i}`} className="jp-resolve-error" role="alert">
          {e}
        </div>
      ))}
      {summary && (
        <div className="jp-resolve-summary" aria-label="empty-run summary">
          {summary}
        </div>
      )}
      <Footer run={run} live={props.live} />
    </div>
  );
}
