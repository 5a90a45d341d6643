/**
 * Tokens for MCP clients (issue 31.6), in the Status tab: each is accepted on `resolve/mcp`
 * only; the server keeps its SHA-256, so a new token is shown this once, with the URL to use.
 */
import { Clipboard } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import * as React from 'react';
import * as api from '../api';
import { IMcpToken } from '../listings';
import { describeError } from '../request';

/** The MCP endpoint's full URL (under the server's base URL, as a client reaches it). */
function mcpUrl(): string {
  const base = ServerConnection.makeSettings().baseUrl;
  return URLExt.join(new URL(base, window.location.href).href, 'resolve/mcp');
}

/** The new token, shown once: copy it and the URL, then dismiss it. */
function NewToken(props: {
  readonly token: IMcpToken & { token: string };
  readonly onDismiss: () => void;
}): JSX.Element {
  const url = mcpUrl();
  return (
    <div className="jp-resolve-mcp-new" role="group" aria-label="New MCP token">
      <div>Copy this token now: it is not shown again.</div>
      <div className="jp-resolve-copyable">
        <code className="jp-resolve-mcp-token-value">{props.token.token}</code>
        <button className="jp-mod-styled" onClick={() => Clipboard.copyToSystem(props.token.token)}>
          Copy token
        </button>
      </div>
      <div className="jp-resolve-copyable">
        <code className="jp-resolve-mcp-url">{url}</code>
        <button className="jp-mod-styled" onClick={() => Clipboard.copyToSystem(url)}>
          Copy URL
        </button>
      </div>
      <div className="jp-resolve-row-meta">
        Send it as <code>Authorization: Bearer …</code>; it works on this URL only.
      </div>
      <button className="jp-mod-styled" onClick={props.onDismiss}>
        Done
      </button>
    </div>
  );
}

export function McpTokens(): JSX.Element {
  const [tokens, setTokens] = React.useState<IMcpToken[] | null>(null);
  const [made, setMade] = React.useState<(IMcpToken & { token: string }) | null>(null);
  const [name, setName] = React.useState('');
  const [error, setError] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);
  const act = async (what: string, action: () => Promise<void>) => {
    setBusy(true);
    try {
      await action();
      setTokens(await api.mcpTokens());
      setError(null);
    } catch (e) {
      setError(describeError(e, what));
    } finally {
      setBusy(false);
    }
  };
  React.useEffect(() => void act('MCP tokens', async () => undefined), []);
  const create = () =>
    act('New MCP token', async () => {
      setMade(await api.createMcpToken(name.trim() || undefined));
      setName('');
    });
  return (
    <section className="jp-resolve-mcp-tokens" aria-label="MCP tokens">
      <h3 className="jp-resolve-status-heading">MCP tokens</h3>
      <div className="jp-resolve-row-meta">
        For an MCP client (an editor, another agent): accepted on <code>resolve/mcp</code> only; its
        proposals wait for you.
      </div>
      <form
        className="jp-resolve-mcp-create"
        onSubmit={e => {
          e.preventDefault();
          void create();
        }}
      >
        <input
          className="jp-resolve-mcp-name-input"
          aria-label="Token name"
          placeholder="mcp client"
          maxLength={128}
          value={name}
          onChange={e => setName(e.target.value)}
        />
        <button type="submit" className="jp-mod-styled jp-mod-accept" disabled={busy}>
          New token
        </button>
      </form>
      {error && <div className="jp-resolve-error">{error}</div>}
      {made && <NewToken token={made} onDismiss={() => setMade(null)} />}
      {tokens && !tokens.length && <div className="jp-resolve-empty">No MCP tokens.</div>}
      <ul className="jp-resolve-mcp-token-list" aria-label="MCP token list">
        {tokens?.map(t => (
          <li key={t.id} className="jp-resolve-mcp-token" data-token-id={t.id}>
            <span className="jp-resolve-row-title">{t.name}</span>
            <span className="jp-resolve-row-meta">
              {new Date(t.created * 1000).toLocaleString()} · {t.id}
            </span>
            <button
              className="jp-mod-styled jp-mod-reject"
              disabled={busy}
              aria-label={`Revoke ${t.name}`}
              onClick={() => void act('Revoke', () => api.revokeMcpToken(t.id))}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
