/** A tool call: name, status, arguments, output, images; Approve/Deny while it waits. */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';
import { toolOutputText } from '../plain';
import { promoteToolResult } from '../promote';
import { IToolCall, statusLabel } from '../run';
import { MimeOutput } from './Rendered';

function formatArguments(args: unknown): string {
  if (args && typeof args === 'object' && 'code' in args && Object.keys(args).length === 1) {
    return String((args as { code: unknown }).code);
  }
  return JSON.stringify(args, null, 2);
}

/** "Promote…" under a finished call's result: titled by the person, read from the record. */
function PromoteResult(props: { readonly call: IToolCall }): JSX.Element | null {
  const { call } = props;
  const [busy, setBusy] = React.useState(false);
  if (call.status !== 'done' || !call.runId || (!call.mime && !call.output.trim())) {
    return null;
  }
  const shows = call.mime ? Object.keys(call.mime).find(m => m !== 'text/plain') : undefined;
  const suggested = `${call.name} ${shows ? shows.split('/')[0] : 'output'}`;
  return (
    <div className="jp-resolve-tool-actions">
      <button
        className="jp-mod-styled jp-resolve-promote"
        disabled={busy}
        title="Keep this result as an artifact, with where it came from"
        onClick={() => {
          setBusy(true);
          void promoteToolResult(call.runId!, call.callId, suggested).finally(() => setBusy(false));
        }}
      >
        Promote…
      </button>
    </div>
  );
}

export function ToolCard(props: {
  readonly call: IToolCall;
  readonly rendermime: IRenderMimeRegistry;
  readonly onDecide?: (decision: 'approve' | 'deny', always?: boolean) => void;
  /** An external agent's call: its "always" choices too (issue 36). */
  readonly always?: boolean;
  /** Shown under the header whatever the details' state (a proposal's card). */
  readonly children?: React.ReactNode;
}): JSX.Element {
  const { call } = props;
  // a proposal's card says it all: its arguments and result start hidden
  const [open, setOpen] = React.useState(!props.children);
  return (
    <div className={`jp-resolve-tool jp-resolve-tool-${call.status}`} data-call-id={call.callId}>
      <button
        className="jp-resolve-tool-header"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        title="Show or hide the details"
      >
        <span className="jp-resolve-tool-name">{call.name}</span>
        <span className="jp-resolve-tool-status">{statusLabel(call.status)}</span>
        {call.ms !== null && <span className="jp-resolve-tool-ms">{call.ms} ms</span>}
      </button>
      {call.status === 'waiting' && props.onDecide && !call.proposalId && (
        <div className="jp-resolve-approval" role="group" aria-label="Approve or deny this call">
          <span>The agent wants to run this {call.name} call.</span>
          <button className="jp-mod-styled jp-mod-accept" onClick={() => props.onDecide!('approve')}>
            Approve
          </button>
          <button className="jp-mod-styled jp-mod-reject" onClick={() => props.onDecide!('deny')}>
            Deny
          </button>
          {props.always && (
            <>
              <button
                className="jp-mod-styled jp-resolve-always"
                title="The agent does not ask again for calls of this kind"
                onClick={() => props.onDecide!('approve', true)}
              >
                Always allow
              </button>
              <button
                className="jp-mod-styled jp-resolve-always"
                title="The agent does not ask again: such calls are refused"
                onClick={() => props.onDecide!('deny', true)}
              >
                Always deny
              </button>
            </>
          )}
        </div>
      )}
      {props.children}
      {open && (
        <div className="jp-resolve-tool-body">
          {!props.children && ( // a proposal's card shows its cells, not their raw JSON
            <pre className="jp-resolve-tool-args" aria-label="arguments">
              {formatArguments(call.arguments)}
            </pre>
          )}
          {toolOutputText(call.output, call.mime !== null) && (
            <pre className="jp-resolve-tool-output" aria-label="output">
              {toolOutputText(call.output, call.mime !== null)}
              {call.truncated ? '\n[output truncated]' : ''}
            </pre>
          )}
          {call.mime && <MimeOutput rendermime={props.rendermime} bundle={call.mime} />}
          <PromoteResult call={call} />
        </div>
      )}
    </div>
  );
}
