/** Sessions, runs and artifacts: lists that load on open and act on a click. */
import { Clipboard, Notification } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';
import * as api from '../api';
import { ChatModel } from '../model';
import { artifactBy, artifactMeta, artifactSource, artifactWhen, reasonLabel } from '../plain';
import { describeError } from '../request';
import { ISessionRow } from '../listings';
import { IArtifact, IRunInfo } from '../validate';
import { ArtifactActions } from './ArtifactActions';
import { LoadMore, usePaged } from './Paged';
import { MimeOutput } from './Rendered';

function when(milliseconds: number): string {
  return new Date(milliseconds).toLocaleString();
}

/** "1,234 tokens · $0.0123" from a run's usage, when the server counted it. */
function usage(run: IRunInfo): string {
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const tokens = count(run.prompt_tokens) + count(run.completion_tokens);
  const cost = count(run.cost);
  const price = cost < 0.0001 ? '< $0.0001' : `$${cost.toFixed(4)}`;
  return (tokens ? ` · ${tokens.toLocaleString()} tokens` : '') + (cost ? ` · ${price}` : '');
}

export function Sessions(props: {
  readonly model: ChatModel;
  readonly onOpen: () => void;
}): JSX.Element {
  const { model } = props;
  const [state, listing] = usePaged(
    before => model.sessionsPage(before),
    (s: ISessionRow) => s.id
  );
  return (
    <div className="jp-resolve-list jp-resolve-sessions">
      <div className="jp-resolve-list-actions">
        <button
          className="jp-mod-styled jp-mod-accept"
          onClick={() => {
            model.newSession();
            props.onOpen();
          }}
        >
          New session
        </button>
        <button className="jp-mod-styled" onClick={() => void listing.reset()}>
          Refresh
        </button>
      </div>
      {state.error && <div className="jp-resolve-error">{state.error}</div>}
      {!state.more && !state.rows.length && <div className="jp-resolve-empty">No sessions yet.</div>}
      <ul aria-label="sessions">
        {state.rows.map(s => (
          <li key={s.id}>
            <button
              className={`jp-resolve-row ${s.id === model.sessionId ? 'jp-mod-current' : ''}`}
              data-session-id={s.id}
              onClick={() => {
                props.onOpen();
                void model.openSession(s.id);
              }}
            >
              <span className="jp-resolve-row-title">{s.title}</span>
              <span className="jp-resolve-row-meta">
                {s.runs} run{s.runs === 1 ? '' : 's'} · {when(s.lastAt)}
                {s.peer ? ` · from ${s.peer}` : ''}
              </span>
            </button>
          </li>
        ))}
      </ul>
      <LoadMore listing={listing} state={state} noun="sessions" one="session" />
    </div>
  );
}

export function Runs(props: { readonly model: ChatModel; readonly onOpen: () => void }): JSX.Element {
  const [state, listing] = usePaged(
    before => api.runsPage(before),
    (r: IRunInfo) => r.run_id
  );
  return (
    <div className="jp-resolve-list jp-resolve-runs">
      <div className="jp-resolve-list-actions">
        <button className="jp-mod-styled" onClick={() => void listing.reset()}>
          Refresh
        </button>
      </div>
      {state.error && <div className="jp-resolve-error">{state.error}</div>}
      {!state.more && !state.rows.length && <div className="jp-resolve-empty">No runs yet.</div>}
      <ul aria-label="runs">
        {state.rows.map(r => (
          <li key={r.run_id}>
            <button
              className="jp-resolve-row"
              data-run-id={r.run_id}
              title="Replay this run's session"
              onClick={() => {
                props.onOpen();
                void props.model.openSession(r.session_id);
              }}
            >
              <span className="jp-resolve-row-title">{r.prompt || r.run_id}</span>
              <span className="jp-resolve-row-meta">
                {r.status === 'running' ? 'running' : reasonLabel(r.reason ?? '')} ·{' '}
                {r.soul ?? 'default'} · {when(r.started_at * 1000)}
                {r.ended_at !== null && ` · ${(r.ended_at - r.started_at).toFixed(1)} s`}
                {usage(r)}
              </span>
            </button>
          </li>
        ))}
      </ul>
      <LoadMore listing={listing} state={state} noun="runs" one="run" />
    </div>
  );
}

/** Artifacts previewed rendered (untrusted, so sanitized: a DataFrame's HTML is a table). */
const RENDERED_TYPES = ['text/html', 'text/markdown'];
const PREVIEW_MAX = 20000;

/** The artifact's content: an image, HTML or Markdown rendered and sanitized, else text. */
function Content(props: {
  readonly artifact: IArtifact;
  readonly rendermime: IRenderMimeRegistry;
  readonly text: string;
}): JSX.Element {
  const { media_type: type } = props.artifact;
  const cut = props.text.length > PREVIEW_MAX;
  const text = cut ? props.text.slice(0, PREVIEW_MAX) : props.text;
  return (
    <>
      {RENDERED_TYPES.includes(type) ? (
        <div className="jp-resolve-artifact-rendered">
          <MimeOutput rendermime={props.rendermime} bundle={{ [type]: text }} />
        </div>
      ) : (
        <pre className="jp-resolve-tool-output">{text}</pre>
      )}
      {cut && <div className="jp-resolve-row-meta">[… preview cut at 20,000 characters]</div>}
    </>
  );
}

function Preview(props: {
  readonly artifact: IArtifact;
  readonly rendermime: IRenderMimeRegistry;
}): JSX.Element {
  const { artifact } = props;
  const [url, setUrl] = React.useState<string | null>(null);
  const [text, setText] = React.useState<string | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => {
    let objectUrl: string | null = null;
    let live = true;
    api.artifactContent(artifact.id).then(
      async blob => {
        if (!live) {
          return;
        }
        if (artifact.media_type.startsWith('image/')) {
          const typed = blob.type ? blob : new Blob([blob], { type: artifact.media_type });
          objectUrl = URL.createObjectURL(typed);
          setUrl(objectUrl);
        } else {
          setText(await blob.text());
        }
      },
      e => live && setError(describeError(e, 'Content'))
    );
    return () => {
      live = false;
      if (objectUrl) {
        URL.revokeObjectURL(objectUrl);
      }
    };
  }, [artifact.id]);
  const source = Object.entries(artifact.source).filter(([, v]) => v !== null && v !== '');
  return (
    <div className="jp-resolve-artifact-preview">
      {error && <div className="jp-resolve-error">{error}</div>}
      {url && <img className="jp-resolve-image" src={url} alt={artifact.title} />}
      {text !== null && <Content artifact={artifact} rendermime={props.rendermime} text={text} />}
      <dl className="jp-resolve-provenance" aria-label="provenance">
        <dt>id</dt>
        <dd>
          <code>{artifact.id}</code>{' '}
          <button className="jp-resolve-link" onClick={() => Clipboard.copyToSystem(artifact.id)}>
            Copy id
          </button>
        </dd>
        <dt>sha256</dt>
        <dd>
          <code>{artifact.sha256.slice(0, 16)}…</code>
        </dd>
        <dt>type</dt>
        <dd>
          {artifact.media_type} · {artifact.size} bytes
        </dd>
        {source.map(([k, v]) => (
          <React.Fragment key={k}>
            <dt>{k}</dt>
            <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
          </React.Fragment>
        ))}
        {artifactBy(artifact) && (
          <>
            <dt>by</dt>
            <dd title={artifact.created_by}>{artifactBy(artifact)}</dd>
          </>
        )}
        {artifactWhen(artifact) && (
          <>
            <dt>when</dt>
            <dd>{artifactWhen(artifact)}</dd>
          </>
        )}
      </dl>
    </div>
  );
}

/** "from analysis.ipynb Out[3]": a link that opens the notebook at the source cell. */
function ArtifactSource(props: {
  readonly model: ChatModel;
  readonly artifact: IArtifact;
}): JSX.Element {
  const source = artifactSource(props.artifact);
  const actions = props.model.decisions.notebookActions;
  const { notebook, cellId } = source;
  if (!notebook || !cellId || !actions) {
    return <span className="jp-resolve-row-meta">from {source.text}</span>;
  }
  return (
    <button
      className="jp-resolve-link jp-resolve-artifact-source"
      title={`Open ${notebook} at the cell this came from`}
      onClick={() =>
        void actions
          .reveal(notebook, cellId)
          .catch(e => Notification.error(describeError(e, 'Open the source cell')))
      }
    >
      from {source.text}
    </button>
  );
}

export function Artifacts(props: {
  readonly model: ChatModel;
  readonly rendermime: IRenderMimeRegistry;
  readonly generation: number;
}): JSX.Element {
  const [list, setList] = React.useState<IArtifact[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [selected, setSelected] = React.useState<string | null>(null);
  const [generation, setGeneration] = React.useState(0);
  React.useEffect(() => {
    api.artifacts().then(
      a => {
        setList(a);
        setError(null);
      },
      e => setError(describeError(e, 'Artifacts'))
    );
  }, [props.generation, generation]);
  return (
    <div className="jp-resolve-list jp-resolve-artifacts">
      <div className="jp-resolve-list-actions">
        <button className="jp-mod-styled" onClick={() => setGeneration(g => g + 1)}>
          Refresh
        </button>
      </div>
      {error && <div className="jp-resolve-error">{error}</div>}
      {list && !list.length && (
        <div className="jp-resolve-empty">
          No artifacts yet. Right-click a cell output and choose “Promote output”.
        </div>
      )}
      <ul>
        {list?.map(a => (
          <li key={a.id}>
            <button
              className={`jp-resolve-row ${a.id === selected ? 'jp-mod-current' : ''}`}
              aria-expanded={a.id === selected}
              onClick={() => setSelected(a.id === selected ? null : a.id)}
            >
              <span className="jp-resolve-row-title">{a.title}</span>
              <span className="jp-resolve-row-meta" title={a.id}>
                {artifactMeta(a)}
              </span>
            </button>
            <ArtifactSource model={props.model} artifact={a} />
            <ArtifactActions artifactId={a.id} expanded={a.id === selected} />
            {a.id === selected && <Preview artifact={a} rendermime={props.rendermime} />}
          </li>
        ))}
      </ul>
    </div>
  );
}
