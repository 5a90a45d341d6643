/** The conversation: each turn's message and answer, a banner, and the composer. */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';
import { IMention } from '../events';
import { ChatModel } from '../model';
import { emptyChatHint } from '../plain';
import { promptOf } from '../turn';
import { Answer } from './Answer';
import { Composer } from './Composer';

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

/** The conversation, kept at its end while new text arrives unless the person scrolled up. */
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
    const toEnd = () => stick.current && (node.scrollTop = node.scrollHeight);
    const observer = new MutationObserver(toEnd);
    observer.observe(node, { childList: true, subtree: true, characterData: true });
    // a narrower panel wraps the text taller: stay at the end then too
    const resized = new ResizeObserver(toEnd);
    resized.observe(node);
    node.addEventListener('load', toEnd, true);
    return () => {
      observer.disconnect();
      resized.disconnect();
      node.removeEventListener('load', toEnd, true);
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
            {emptyChatHint(model.server.health?.providerName ?? null)}
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
