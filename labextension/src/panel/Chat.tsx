/** The conversation: turns, streamed answers, tool cards, the footer and the composer. */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';
import { ChatModel, ITurn, promptOf } from '../model';
import { IRunView, emptySummary } from '../run';
import { composerHint, sends } from '../settings';
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
      <span title={`prompt ${run.promptTokens}, completion ${run.completionTokens}`}>
        tokens {tokens}
      </span>
      <span>{seconds.toFixed(1)} s</span>
      {run.reason && <span className={`jp-resolve-reason-${run.reason}`}>{run.reason}</span>}
      {run.compacted && <span title="context compacted">context: {run.compacted}</span>}
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
          case 'step':
            return (
              <div key={i} className="jp-resolve-step-title">
                {part.soul}
              </div>
            );
          case 'tool': {
            const call = run.tools[part.callId];
            return (
              <ToolCard
                key={i}
                call={call}
                rendermime={props.rendermime}
                onDecide={d => void props.model.decide(run, call.callId, d)}
              />
            );
          }
        }
      })}
      {props.live && !run.parts.length && <div className="jp-resolve-pending">Thinking…</div>}
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

function Composer(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  const [text, setText] = React.useState('');
  const send = () => {
    if (!text.trim() || model.busy) {
      return;
    }
    const value = text;
    setText('');
    void model.send(value);
  };
  return (
    <div className="jp-resolve-composer">
      <textarea
        className="jp-resolve-input"
        aria-label="Message to Resolve"
        placeholder={composerHint(model.settings.sendKey)}
        value={text}
        rows={3}
        onChange={e => setText(e.target.value)}
        onKeyDown={e => {
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
