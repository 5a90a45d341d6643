/**
 * The session's transcript as the server keeps it (DESIGN 9.1): what a chat continuing the
 * session sends the model — user and assistant turns, tool calls and their results, cut.
 * Shown as text only.
 */
import * as React from 'react';
import { ChatModel } from '../model';
import { describeError } from '../request';
import { ITranscriptItem, transcriptItems } from '../transcript';
import { ITranscript } from '../validate';

const LABELS: { [kind in ITranscriptItem['kind']]: string } = {
  system: 'system',
  user: 'you',
  assistant: 'assistant',
  call: 'call',
  result: 'result'
};

export function Transcript(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  const [transcript, setTranscript] = React.useState<ITranscript | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [generation, setGeneration] = React.useState(0);
  const sessionId = model.sessionId;
  // reload when the session changes or one of its runs ends
  const finished = model.turns.filter(t => t.run.endedAt !== null).length;
  React.useEffect(() => {
    let live = true;
    setError(null);
    model.transcript().then(
      t => live && setTranscript(t),
      e => live && (setTranscript(null), setError(describeError(e, 'Transcript')))
    );
    return () => {
      live = false;
    };
  }, [sessionId, finished, generation]);
  const items = transcript ? transcriptItems(transcript.messages) : [];
  return (
    <div className="jp-resolve-list jp-resolve-transcript">
      <div className="jp-resolve-list-actions">
        <button className="jp-mod-styled" onClick={() => setGeneration(g => g + 1)}>
          Refresh
        </button>
        {transcript && (
          <span
            className="jp-resolve-row-meta"
            title="What a chat continuing this session sends, before fitting"
          >
            {transcript.session_id} · {transcript.messages.length} messages · ~
            {transcript.tokens_estimate.toLocaleString('en-US')} tokens
          </span>
        )}
      </div>
      {error && <div className="jp-resolve-error">{error}</div>}
      {!sessionId && (
        <div className="jp-resolve-empty">
          No session yet: its transcript starts with the first answer.
        </div>
      )}
      {sessionId && transcript && !items.length && (
        <div className="jp-resolve-empty">
          Nothing yet: a run joins the transcript when it ends.
        </div>
      )}
      <ol className="jp-resolve-transcript-items" aria-label="Session transcript">
        {items.map((item, i) => (
          <li key={i} className={`jp-resolve-transcript-item jp-mod-${item.kind}`}>
            <span className="jp-resolve-transcript-role">
              {LABELS[item.kind]}
              {item.name ? ` ${item.name}` : ''}
            </span>
            <pre className="jp-resolve-transcript-text">
              {item.text}
              {item.cut ? `\n[… ${item.cut} more characters]` : ''}
            </pre>
          </li>
        ))}
      </ol>
    </div>
  );
}
