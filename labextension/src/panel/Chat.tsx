/** The conversation: turns, streamed answers, tool cards, the footer and the composer. */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';
import {
  completeMention,
  IMentionQuery,
  matchVariables,
  mentionAt,
  variableHint
} from '../mentions';
import { ChatModel, ITurn, promptOf } from '../model';
import { compactionLine, ICompaction, IRunView, emptySummary, usageLine } from '../run';
import { composerHint, sends } from '../settings';
import { IMention } from '../validate';
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
          (tokens ? '' : ' (the provider reported none)')
        }
      >
        {usageLine(run)}
      </span>
      <span>{seconds.toFixed(1)} s</span>
      {run.reason && <span className={`jp-resolve-reason-${run.reason}`}>{run.reason}</span>}
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

/** What the model was told about the variables the person mentioned (collapsed, as text). */
function Mentions(props: { readonly mentions: IMention[] }): JSX.Element | null {
  if (!props.mentions.length) {
    return null;
  }
  return (
    <details className="jp-resolve-mentions">
      <summary>
        The model was told about {props.mentions.map(m => `@${m.name}`).join(', ')}
      </summary>
      {props.mentions.map(m => (
        <pre key={m.name} className="jp-resolve-mention" aria-label={`@${m.name}`}>
          {m.description}
        </pre>
      ))}
    </details>
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

function Answer(props: {
  readonly model: ChatModel;
  readonly rendermime: IRenderMimeRegistry;
  readonly turn: ITurn;
  readonly live: boolean;
}): JSX.Element {
  const { run } = props.turn;
  const summary = emptySummary(run);
  return (
    <div className="jp-resolve-message jp-resolve-assistant" data-run-id={run.runId}>
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
          case 'tool': {
            const call = run.tools[part.callId];
            const proposal = call.proposalId ? run.proposals?.[call.proposalId] : undefined;
            return (
              <ToolCard
                key={i}
                call={call}
                rendermime={props.rendermime}
                onDecide={d => void props.model.decide(run, call.callId, d)}
              >
                {proposal && <ProposalCard model={props.model} run={run} proposal={proposal} />}
              </ToolCard>
            );
          }
        }
      })}
      {props.live && run.parts.every(p => p.kind === 'compaction') && (
        <div className="jp-resolve-pending">Thinking…</div>
      )}
      {run.errors.map((e, i) => (
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

/** The `@name` completion list under the message box: the bound notebook's variables. */
function MentionList(props: {
  readonly model: ChatModel;
  readonly query: IMentionQuery;
  readonly active: number;
  readonly onPick: (name: string) => void;
}): JSX.Element {
  const { model } = props;
  const matches = matchVariables(model.variables ?? [], props.query.query);
  return (
    <div className="jp-resolve-mention-popup">
      {model.variables === null ? (
        <div className="jp-resolve-mention-note">Loading the notebook's variables…</div>
      ) : !matches.length ? (
        <div className="jp-resolve-mention-note">
          {model.variablesNote ?? `No variable matches @${props.query.query}.`}
        </div>
      ) : (
        <ul id="jp-resolve-mention-list" role="listbox" aria-label="Variables to mention">
          {matches.map((v, i) => (
            <li
              key={v.name}
              id={`jp-resolve-mention-${i}`}
              role="option"
              aria-selected={i === props.active}
              className={`jp-resolve-mention-option ${i === props.active ? 'jp-mod-active' : ''}`}
              title={v.summary}
              // mousedown, not click: the message box keeps the focus
              onMouseDown={e => {
                e.preventDefault();
                props.onPick(v.name);
              }}
            >
              <span className="jp-resolve-mention-name">@{v.name}</span>
              <span className="jp-resolve-mention-type">{variableHint(v)}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Composer(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  const [text, setText] = React.useState('');
  const [mention, setMention] = React.useState<IMentionQuery | null>(null);
  const [active, setActive] = React.useState(0);
  const input = React.useRef<HTMLTextAreaElement>(null);
  const caretTo = React.useRef<number | null>(null);
  React.useLayoutEffect(() => {
    if (caretTo.current !== null && input.current) {
      input.current.setSelectionRange(caretTo.current, caretTo.current);
      caretTo.current = null;
    }
  });
  const follow = (value: string, caret: number) => {
    const at = mentionAt(value, caret);
    if (at && (!mention || mention.start !== at.start)) {
      void model.loadVariables(); // a new @: the kernel's names as they are now
      setActive(0);
    }
    setMention(at);
  };
  const matches = mention ? matchVariables(model.variables ?? [], mention.query) : [];
  const pick = (name: string) => {
    const node = input.current;
    if (!mention || !node) {
      return;
    }
    const done = completeMention(text, node.selectionStart ?? text.length, mention, name);
    setText(done.text);
    caretTo.current = done.caret;
    setMention(null);
  };
  const send = () => {
    if (!text.trim() || model.busy) {
      return;
    }
    const value = text;
    setText('');
    setMention(null);
    void model.send(value);
  };
  return (
    <div className="jp-resolve-composer">
      {model.notebook && (
        <div
          className="jp-resolve-bound"
          title="Every message names this notebook: its tools act on it"
        >
          About <code>{model.notebook}</code> · type @ to mention its variables{' '}
          <button
            className="jp-resolve-link"
            aria-label="Stop chatting about this notebook"
            onClick={() => model.bindNotebook(null)}
          >
            ×
          </button>
        </div>
      )}
      {mention && <MentionList model={model} query={mention} active={active} onPick={pick} />}
      <textarea
        ref={input}
        className="jp-resolve-input"
        aria-label="Message to Resolve"
        aria-autocomplete="list"
        aria-expanded={mention !== null && matches.length > 0}
        aria-controls={mention && matches.length ? 'jp-resolve-mention-list' : undefined}
        aria-activedescendant={
          mention && matches.length ? `jp-resolve-mention-${active}` : undefined
        }
        placeholder={composerHint(model.settings.sendKey)}
        value={text}
        rows={3}
        onChange={e => {
          setText(e.target.value);
          follow(e.target.value, e.target.selectionStart ?? e.target.value.length);
        }}
        onSelect={e => {
          const node = e.currentTarget;
          if (node.selectionStart === node.selectionEnd) {
            follow(node.value, node.selectionStart ?? node.value.length);
          }
        }}
        onBlur={() => setMention(null)}
        onKeyDown={e => {
          if (mention && matches.length) {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              const step = e.key === 'ArrowDown' ? 1 : matches.length - 1;
              setActive((Math.min(active, matches.length - 1) + step) % matches.length);
              return;
            }
            const takes = e.key === 'Enter' || e.key === 'Tab';
            if (takes && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              pick(matches[Math.min(active, matches.length - 1)].name);
              return;
            }
          }
          if (mention && e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            setMention(null);
            return;
          }
          if (sends(e.nativeEvent, model.settings.sendKey)) {
            e.preventDefault();
            send();
          }
        }}
      />
      <div className="jp-resolve-composer-actions">
        {model.busy ? (
          <button className="jp-mod-styled jp-mod-warn jp-resolve-stop" onClick={() => void model.stop()}>
            Stop
          </button>
        ) : (
          <button
            className="jp-mod-styled jp-mod-accept jp-resolve-send"
            disabled={!text.trim()}
            onClick={send}
          >
            Send
          </button>
        )}
      </div>
    </div>
  );
}

export function Chat(props: {
  readonly model: ChatModel;
  readonly rendermime: IRenderMimeRegistry;
}): JSX.Element {
  const { model } = props;
  const list = React.useRef<HTMLDivElement>(null);
  const stick = React.useRef(true);
  React.useLayoutEffect(() => {
    const node = list.current;
    if (node && stick.current) {
      node.scrollTop = node.scrollHeight;
    }
  });
  React.useEffect(() => {
    // Markdown and images render after React commits: keep the view at the bottom then too
    const node = list.current;
    if (!node) {
      return;
    }
    const observer = new MutationObserver(() => {
      if (stick.current) {
        node.scrollTop = node.scrollHeight;
      }
    });
    observer.observe(node, { childList: true, subtree: true, characterData: true });
    const onLoad = () => stick.current && (node.scrollTop = node.scrollHeight);
    node.addEventListener('load', onLoad, true);
    return () => {
      observer.disconnect();
      node.removeEventListener('load', onLoad, true);
    };
  }, []);
  const last = model.turns.length - 1;
  return (
    <div className="jp-resolve-chat">
      <div
        className="jp-resolve-messages"
        ref={list}
        role="log"
        aria-live="polite"
        tabIndex={0}
        onScroll={e => {
          const n = e.currentTarget;
          stick.current = n.scrollHeight - n.scrollTop - n.clientHeight < 40;
        }}
      >
        {!model.turns.length && (
          <div className="jp-resolve-empty">
            Ask a question. Fence Python in ```python and the agent can run it in its own
            scratch kernel.
          </div>
        )}
        {model.turns.map((turn, i) => (
          <React.Fragment key={i}>
            <div className="jp-resolve-message jp-resolve-user">
              {promptOf(turn) || '(this run was started elsewhere; its prompt was not kept)'}
              <Mentions mentions={turn.run.mentions ?? []} />
            </div>
            <Answer
              model={model}
              rendermime={props.rendermime}
              turn={turn}
              live={model.busy && i === last}
            />
          </React.Fragment>
        ))}
      </div>
      {(model.error || model.notice) && (
        <div className="jp-resolve-banner" role="alert">
          <span>{model.error ?? model.notice}</span>
          <button className="jp-resolve-link" onClick={() => model.dismiss()} aria-label="Dismiss">
            ×
          </button>
        </div>
      )}
      <Composer model={model} />
    </div>
  );
}
