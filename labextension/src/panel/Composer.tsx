/**
 * The message box: sending (while a run works, steering it), the bound notebook, and `@name`
 * completion of its variables.
 */
import * as React from 'react';
import {
  completeMention,
  IMentionQuery,
  matchVariables,
  mentionAt,
  unknownMentionsNote,
  variableHint
} from '../mentions';
import { ChatModel } from '../model';
import { composerHint, sends } from '../settings';

/** The `@name` completion list under the message box: the bound notebook's variables. */
function MentionList(props: {
  readonly model: ChatModel;
  readonly query: IMentionQuery;
  readonly active: number;
  readonly onPick: (name: string) => void;
}): JSX.Element {
  const { model } = props;
  const matches = matchVariables(model.variables.list ?? [], props.query.query);
  return (
    <div className="jp-resolve-mention-popup">
      {model.variables.list === null ? (
        <div className="jp-resolve-mention-note">Loading the notebook's variables…</div>
      ) : !matches.length ? (
        <div className="jp-resolve-mention-note">
          {model.variables.note ?? `No variable matches @${props.query.query}.`}
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

/** The notebook the chat is about, with a button to stop chatting about it. */
function BoundNotebook(props: { readonly model: ChatModel }): JSX.Element | null {
  const { model } = props;
  if (!model.notebook) {
    return null;
  }
  return (
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
  );
}

/** What the message box's keys do while the `@name` list is open: move, pick, close. */
interface IMentionKeys {
  readonly mention: IMentionQuery | null;
  readonly matches: readonly { readonly name: string }[];
  readonly active: number;
  readonly setActive: (index: number) => void;
  readonly pick: (name: string) => void;
  readonly close: () => void;
}

/** Handle a key for the `@name` list; true when it was the list's (nothing else to do). */
function mentionKey(e: React.KeyboardEvent<HTMLTextAreaElement>, keys: IMentionKeys): boolean {
  const { mention, matches, active } = keys;
  if (mention && matches.length) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const step = e.key === 'ArrowDown' ? 1 : matches.length - 1;
      keys.setActive((Math.min(active, matches.length - 1) + step) % matches.length);
      return true;
    }
    const takes = e.key === 'Enter' || e.key === 'Tab';
    if (takes && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      keys.pick(matches[Math.min(active, matches.length - 1)].name);
      return true;
    }
  }
  if (mention && e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    keys.close();
    return true;
  }
  return false;
}

/**
 * Send, as the model is idle; while it answers: Steer (what the send key does: the message goes
 * to the running answer, read at its next step), Send as new run (once this one ends), Stop.
 */
function SendOrStop(props: {
  readonly model: ChatModel;
  readonly text: string;
  readonly send: (asNewRun?: boolean) => void;
}): JSX.Element {
  const { model } = props;
  const empty = !props.text.trim();
  return (
    <div className="jp-resolve-composer-actions">
      {model.busy ? (
        <>
          <button
            className="jp-mod-styled jp-mod-accept jp-resolve-steer-send"
            disabled={empty}
            title="The running answer reads it at its next step (after the tool call in progress)"
            onClick={() => props.send()}
          >
            Steer
          </button>
          <button
            className="jp-mod-styled jp-resolve-send-later"
            disabled={empty}
            title="Send it as its own run once the running one ends"
            onClick={() => props.send(true)}
          >
            Send as new run
          </button>
          <button
            className="jp-mod-styled jp-mod-warn jp-resolve-stop"
            onClick={() => void model.stop()}
          >
            Stop
          </button>
        </>
      ) : (
        <button
          className="jp-mod-styled jp-mod-accept jp-resolve-send"
          disabled={!props.text.trim()}
          onClick={() => props.send()}
        >
          Send
        </button>
      )}
    </div>
  );
}

/** Where to put the caret once React has rendered the text (a picked name moves it). */
function useCaretAfterRender(
  input: React.RefObject<HTMLTextAreaElement>
): React.MutableRefObject<number | null> {
  const caretTo = React.useRef<number | null>(null);
  React.useLayoutEffect(() => {
    if (caretTo.current !== null && input.current) {
      input.current.setSelectionRange(caretTo.current, caretTo.current);
      caretTo.current = null;
    }
  });
  return caretTo;
}

/**
 * A message whose `@names` resolve to nothing in the bound notebook's kernel is held once, with
 * a note saying so; sending the same text again sends it as it is.
 */
function useUnknownMentions(model: ChatModel): {
  readonly held: { readonly text: string; readonly note: string } | null;
  readonly holds: (text: string) => Promise<boolean>;
} {
  const [held, setHeld] = React.useState<{ text: string; note: string } | null>(null);
  const holds = async (text: string) => {
    const notebook = model.notebook;
    if (notebook && held?.text !== text) {
      const unknown = await model.variables.unknownIn(text);
      if (unknown.length) {
        const why = model.variables.note ? ` (${model.variables.note})` : '';
        setHeld({ text, note: unknownMentionsNote(unknown, notebook) + why });
        return true;
      }
    }
    setHeld(null);
    return false;
  };
  return { held, holds };
}

/** The message kept to send as a new run once the running one ends, with a way to drop it. */
function NextRun(props: { readonly model: ChatModel }): JSX.Element | null {
  const { steering } = props.model;
  if (!steering.next) {
    return null;
  }
  return (
    <div className="jp-resolve-next-run" role="note">
      Sends as a new run when this one ends: <q>{steering.next}</q>{' '}
      <button
        className="jp-resolve-link"
        aria-label="Do not send it"
        onClick={() => steering.later('')}
      >
        ×
      </button>
    </div>
  );
}

/** Why a message was held: its `@names` resolve to nothing. */
function UnknownNote(props: { readonly note: string }): JSX.Element {
  return (
    <div className="jp-resolve-mention-unknown" role="note">
      {props.note}
    </div>
  );
}

/**
 * What sending does with the text: while a run works, it steers that run (or, `asNewRun`, waits
 * to go as a new run once that one ends); else it starts a run, a message whose `@names` resolve
 * to nothing held once (`held`, with why).
 */
function useSend(
  model: ChatModel,
  text: string,
  clear: () => void
): {
  readonly send: (asNewRun?: boolean) => Promise<void>;
  readonly held: { readonly text: string; readonly note: string } | null;
} {
  const unknown = useUnknownMentions(model);
  const send = async (asNewRun = false) => {
    const live = model.live;
    if (!text.trim()) {
      return;
    }
    if (live) {
      clear();
      void (asNewRun ? model.steering.later(text) : model.steering.send(live.run, text));
    } else if (!model.busy && !(await unknown.holds(text))) {
      clear();
      void model.send(text);
    }
  };
  return { send, held: unknown.held };
}

/** The message box, with `@name` completion of the bound notebook's variables. */
export function Composer(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  const [text, setText] = React.useState('');
  const [mention, setMention] = React.useState<IMentionQuery | null>(null);
  const [active, setActive] = React.useState(0);
  const input = React.useRef<HTMLTextAreaElement>(null);
  const caretTo = useCaretAfterRender(input);
  const follow = (value: string, caret: number) => {
    const at = mentionAt(value, caret);
    if (at && (!mention || mention.start !== at.start)) {
      void model.variables.load(); // a new @: the kernel's names as they are now
      setActive(0);
    }
    setMention(at);
  };
  const matches = mention ? matchVariables(model.variables.list ?? [], mention.query) : [];
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
  const clear = () => {
    setText('');
    setMention(null);
  };
  const { send, held } = useSend(model, text, clear);
  const close = () => setMention(null);
  const keys: IMentionKeys = { mention, matches, active, setActive, pick, close };
  const listed = mention !== null && matches.length > 0;
  return (
    <div className="jp-resolve-composer">
      <BoundNotebook model={model} />
      {mention && <MentionList model={model} query={mention} active={active} onPick={pick} />}
      {held?.text === text && <UnknownNote note={held.note} />}
      <NextRun model={model} />
      <textarea
        ref={input}
        className="jp-resolve-input"
        aria-label="Message to Resolve"
        aria-autocomplete="list"
        aria-expanded={listed}
        aria-controls={listed ? 'jp-resolve-mention-list' : undefined}
        aria-activedescendant={listed ? `jp-resolve-mention-${active}` : undefined}
        placeholder={composerHint(model.settings.sendKey, model.busy)}
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
        onBlur={close}
        onKeyDown={e => {
          if (!mentionKey(e, keys) && sends(e.nativeEvent, model.settings.sendKey)) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <SendOrStop model={model} text={text} send={asNewRun => void send(asNewRun)} />
    </div>
  );
}
