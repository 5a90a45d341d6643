/**
 * How the server's parts stand (`GET resolve/api/health`): the provider, the sandbox, problems,
 * and one row per configured MCP server with its state; a failed server shows its error and the
 * end of its stderr (already redacted by the server), as text.
 */
import * as React from 'react';
import { ChatModel } from '../model';
import { McpTokens } from './McpTokens';
import { providerState } from '../plain';
import * as api from '../api';
import { IUsage, usageLines } from '../hub';
import { describeError, ResolveRequestError } from '../request';
import { byteSize, ILocalModel, IMcpServer, mcpSummary } from '../status';

function McpRow(props: { readonly server: IMcpServer }): JSX.Element {
  const s = props.server;
  return (
    <li
      className={`jp-resolve-mcp jp-mod-${s.state}`}
      data-server={s.name}
      aria-label={`MCP server ${s.name}: ${s.state}`}
    >
      <div className="jp-resolve-mcp-head">
        <span className="jp-resolve-mcp-dot" aria-hidden="true" />
        <span className="jp-resolve-mcp-name">{s.name}</span>
        <span className="jp-resolve-mcp-state">{mcpSummary(s)}</span>
        <span className="jp-resolve-row-meta" title={`${s.transport}: ${s.target}`}>
          {s.transport} · {s.target}
          {s.starts > 1 ? ` · started ${s.starts} times` : ''}
        </span>
      </div>
      {s.tools && s.tools.length > 0 && (
        <div className="jp-resolve-row-meta jp-resolve-mcp-tools">
          {s.tools.map(t => `mcp.${s.name}.${t}`).join(', ')}
        </div>
      )}
      {s.error && <div className="jp-resolve-mcp-error">{s.error}</div>}
      {s.stderrTail && (
        <details className="jp-resolve-mcp-stderr">
          <summary>stderr</summary>
          <pre>{s.stderrTail}</pre>
        </details>
      )}
    </li>
  );
}

/** The model provider: which one, the next run's model, and whether it answers. */
function ProviderRow(props: { readonly model: ChatModel }): JSX.Element | null {
  const health = props.model.server.health;
  if (!health) {
    return null;
  }
  const provider = providerState(health);
  return (
    <div
      className={`jp-resolve-provider jp-mod-${provider.state.replace(' ', '-')}`}
      aria-label={`Model provider: ${provider.state}`}
    >
      <span className="jp-resolve-provider-name">{props.model.modelLabel}</span>
      {' · '}
      <span className="jp-resolve-provider-state">{provider.text}</span>
    </div>
  );
}

/** The local model server (`provider.local`): its file, size, context and state. */
function LocalRow(props: { readonly local: ILocalModel }): JSX.Element {
  const l = props.local;
  return (
    <dl className={`jp-resolve-local-model jp-mod-${l.state}`} aria-label="Local model">
      <dt>model file</dt>
      <dd>{l.modelFile || '(none configured: c.Resolve.local_model)'}</dd>
      <dt>size</dt>
      <dd>{l.sizeBytes === null ? 'file missing' : byteSize(l.sizeBytes)}</dd>
      <dt>context</dt>
      <dd>{l.context === null ? 'unknown' : `${l.context.toLocaleString('en-US')} tokens`}</dd>
      <dt>state</dt>
      <dd>
        {l.state}
        {l.starts > 1 ? ` · started ${l.starts} times` : ''}
      </dd>
      {l.error && (
        <>
          <dt>error</dt>
          <dd className="jp-resolve-mcp-error">{l.error}</dd>
        </>
      )}
    </dl>
  );
}

/**
 * This person's usage and budgets (`GET resolve/api/usage`, issue 37): nothing when the server
 * keeps none (`day` null, or no such endpoint).
 */
function Usage(props: { readonly generation: number }): JSX.Element | null {
  const [usage, setUsage] = React.useState<IUsage | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => {
    let live = true;
    const show = (u: IUsage | null, e: string | null) => {
      if (live) {
        setUsage(u);
        setError(e);
      }
    };
    api.usage().then(
      u => show(u, null),
      // a server without the endpoint keeps no usage: nothing to show
      e => {
        const none = e instanceof ResolveRequestError && e.status === 404;
        show(null, none ? null : describeError(e, 'Usage'));
      }
    );
    return () => {
      live = false;
    };
  }, [props.generation]);
  const lines = usageLines(usage);
  if (!lines.length && !error) {
    return null;
  }
  return (
    <section className="jp-resolve-usage-section" aria-label="Your usage">
      <h3 className="jp-resolve-status-heading">
        Your usage{usage?.user ? ` (${usage.user})` : ''}
      </h3>
      {error && <div className="jp-resolve-error">{error}</div>}
      {lines.map(line => (
        <div key={line} className="jp-resolve-row-meta jp-resolve-usage-line">
          {line}
        </div>
      ))}
    </section>
  );
}

export function Status(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  const health = model.server.health;
  // servers start, fail and restart with the calls: the view asks again each time it opens
  React.useEffect(() => void model.server.refreshHealth(), []);
  const [generation, setGeneration] = React.useState(0);
  const refresh = () => {
    void model.server.refreshHealth();
    setGeneration(g => g + 1);
  };
  return (
    <div className="jp-resolve-list jp-resolve-status">
      <div className="jp-resolve-list-actions">
        <button className="jp-mod-styled" onClick={refresh}>
          Refresh
        </button>
        {health && (
          <span className="jp-resolve-row-meta">
            {health.ok && health.reachable !== false ? 'ok' : 'not ready'}
            {health.sandbox ? ` · ${health.sandbox.label}` : ''}
          </span>
        )}
      </div>
      {health && <ProviderRow model={model} />}
      {health?.local && <LocalRow local={health.local} />}
      <Usage generation={generation} />
      {model.server.healthError && (
        <div className="jp-resolve-error">{model.server.healthError}</div>
      )}
      <h3 className="jp-resolve-status-heading">MCP servers</h3>
      {health && !health.mcp.length && (
        <div className="jp-resolve-empty">
          No MCP servers are configured (c.Resolve.mcp_servers).
        </div>
      )}
      {health && health.mcp.length > 0 && (
        <ul className="jp-resolve-mcp-list" aria-label="MCP servers">
          {health.mcp.map(s => (
            <McpRow key={s.name} server={s} />
          ))}
        </ul>
      )}
      <McpTokens />
    </div>
  );
}
