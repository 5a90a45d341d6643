/** The right-sidebar panel: a header (model, soul, mode), tabs, and the active view. */
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import {
  consoleIcon,
  historyIcon,
  imageIcon,
  LabIcon,
  listIcon,
  ReactWidget,
  runningIcon,
  textEditorIcon,
  UseSignal
} from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import * as React from 'react';
import { RemoteMediaSanitizer } from '../media';
import { ChatModel } from '../model';
import { localSummary } from '../status';
import { agentPick } from '../agents';
import { lockedTitle } from '../hub';
import { Chat } from './Chat';
import { Artifacts, Runs, Sessions } from './Lists';
import { Status } from './Status';
import { Transcript } from './Transcript';

/** The panel's tabs. */
export type Tab = 'chat' | 'transcript' | 'sessions' | 'runs' | 'artifacts' | 'status';
const TABS: Tab[] = ['chat', 'sessions', 'transcript', 'runs', 'artifacts', 'status'];
const LABELS: { [t in Tab]: string } = {
  chat: 'Chat',
  transcript: 'Transcript',
  sessions: 'Sessions',
  runs: 'Runs',
  artifacts: 'Artifacts',
  status: 'Status'
};
/** In a narrow sidebar a tab shows its icon only (its label on hover), so the tabs fit one row. */
const ICONS: { [t in Tab]: LabIcon } = {
  chat: consoleIcon,
  transcript: textEditorIcon,
  sessions: historyIcon,
  runs: runningIcon,
  artifacts: imageIcon,
  status: listIcon
};

/** The model picker: the server's list (`GET resolve/api/models`), the default first. */
function ModelPicker(props: { readonly model: ChatModel }): JSX.Element | null {
  const { model } = props;
  const models = model.server.models;
  if (!models) {
    return null; // not loaded, or a server without the endpoint: the server's default answers
  }
  const others = models.models.filter(m => m.id !== models.default);
  const picked = model.model;
  if (!others.length && !picked) {
    return null; // nothing to pick between (the scripted model, a one-model server)
  }
  const locked = lockedTitle(model.server.health?.locked, 'model');
  return (
    <label className="jp-resolve-model-picker">
      <span className="jp-resolve-sr">Model</span>
      <select
        value={picked}
        aria-label="Model"
        disabled={locked !== null}
        title={locked ?? model.server.modelsNote ?? 'The model the next answer uses'}
        onChange={e => model.setModel(e.target.value)}
      >
        <option value="">
          {models.default ? `${models.default} (default)` : 'default model'}
        </option>
        {picked && !models.models.some(m => m.id === picked) && (
          <option value={picked}>{picked}</option>
        )}
        {others.map(m => (
          <option key={m.id} value={m.id} title={m.listed ? m.id : `${m.id} (not listed)`}>
            {m.name ? `${m.name} (${m.id})` : m.id}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Which project instructions the session's latest run read, e.g. "instructions: AGENTS.md". */
function Instructions(props: { readonly model: ChatModel }): JSX.Element | null {
  const files = props.model.instructions?.files ?? [];
  if (!files.length) {
    return null; // none read (or no run yet): nothing to name
  }
  const title =
    'Project instructions the latest run read:\n' +
    files
      .map(f => `${f.path} (sha256 ${f.sha256.slice(0, 12)}…${f.cut ? ', cut at the cap' : ''})`)
      .join('\n');
  return (
    <span className="jp-resolve-instructions" title={title} aria-label="project instructions">
      instructions: {files.map(f => f.path + (f.cut ? ' (cut)' : '')).join(', ')}
    </span>
  );
}

/** The local model server (issue 34) and the sandbox, as quiet badges in the header. */
function ProviderBadges(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  return (
    <>
      {model.server.health?.local && (
        <span
          className={`jp-resolve-local jp-mod-${model.server.health.local.state}`}
          aria-label="local model"
          title={model.server.health.local.error ?? model.server.health.local.modelFile}
        >
          {localSummary(model.server.health.local)}
        </span>
      )}
      {model.server.health?.sandbox && (
        <span
          className={`jp-resolve-sandbox jp-mod-${model.server.health.sandbox.kind}`}
          style={{
            fontSize: 'var(--jp-ui-font-size0)',
            color:
              model.server.health.sandbox.kind === 'bwrap'
                ? 'var(--jp-success-color0)'
                : 'var(--jp-warn-color0)'
          }}
          title={
            model.server.health.sandbox.kind === 'bwrap'
              ? 'Agent code runs under bubblewrap: only its session folder is writable'
              : model.server.health.sandbox.kind === 'gateway'
                ? "Agent code runs in a kernel on the Jupyter gateway's cluster, isolated as the cluster isolates its kernels (c.Resolve.scratch_kernels)"
                : 'Agent code runs as your user, with your files and network (c.Resolve.sandbox)'
          }
        >
          {model.server.health.sandbox.label}
        </span>
      )}
    </>
  );
}

/** Whether the soul picker's value is one of the souls or agents listed. */
function picked(model: ChatModel): boolean {
  const { souls, agents } = model.server;
  return (
    souls.some(s => s.name === model.soul) || agents.some(a => agentPick(a.name) === model.soul)
  );
}

/** The external agents (issue 36), a group of the soul picker; none: no group. */
function AgentOptions(props: { readonly model: ChatModel }): JSX.Element | null {
  const agents = props.model.server.agents;
  if (!agents.length) {
    return null;
  }
  return (
    <optgroup label="External agents">
      {agents.map(a => (
        <option
          key={a.name}
          value={agentPick(a.name)}
          title={[a.description, a.error].filter(Boolean).join('\n')}
        >
          {a.name}
          {a.state === 'error' ? ' (failed)' : ''}
        </option>
      ))}
    </optgroup>
  );
}

function Header(props: { readonly model: ChatModel }): JSX.Element {
  const { model } = props;
  return (
    <div className="jp-resolve-header">
      <span className="jp-resolve-model" title="The model the next answer uses">
        {model.modelLabel}
      </span>
      <ProviderBadges model={model} />
      <Instructions model={model} />
      {model.server.healthError && (
        <span className="jp-resolve-warning" title={model.server.healthError}>
          ⚠ {model.server.healthError}
        </span>
      )}
      {model.server.modelsNote && (
        <span className="jp-resolve-models-note" role="note" title={model.server.modelsNote}>
          {model.server.modelsNote}
        </span>
      )}
      <div className="jp-resolve-header-controls">
        <ModelPicker model={model} />
        <label className="jp-resolve-mode">
          <span className="jp-resolve-sr">Mode</span>
          <select
            value={model.mode}
            aria-label="Mode"
            onChange={e => model.setMode(e.target.value as 'chat' | 'task')}
          >
            <option value="chat">Chat</option>
            <option value="task">Task (role chain)</option>
          </select>
        </label>
        <label className="jp-resolve-soul">
          <span className="jp-resolve-sr">Soul</span>
          <select
            value={model.soul}
            aria-label="Soul"
            title={model.server.soulsError ?? 'The role the agent takes'}
            disabled={model.mode === 'task'}
            onChange={e => model.setSoul(e.target.value)}
          >
            <option value="">default soul</option>
            {model.soul && !picked(model) && (
              // the settings' default soul, before the list loads or when this server lacks it
              <option value={model.soul}>{model.soul}</option>
            )}
            {model.server.souls.map(s => (
              <option key={s.name} value={s.name} title={s.description}>
                {s.name}
                {s.role && s.role !== s.name ? ` (${s.role})` : ''}
              </option>
            ))}
            <AgentOptions model={model} />
          </select>
        </label>
      </div>
    </div>
  );
}

function PanelView(props: {
  readonly model: ChatModel;
  readonly rendermime: IRenderMimeRegistry;
  readonly panel: ResolvePanel;
}): JSX.Element {
  const { panel } = props;
  const select = (tab: Tab) => panel.setTab(tab);
  return (
    <>
      <Header model={props.model} />
      <div className="jp-resolve-tabs" role="tablist" aria-label="Resolve views">
        {TABS.map(t => (
          <button
            key={t}
            role="tab"
            id={`jp-resolve-tab-${t}`}
            aria-selected={panel.tab === t}
            aria-controls="jp-resolve-tabpanel"
            tabIndex={panel.tab === t ? 0 : -1 /* one tab stop; the arrow keys move between tabs */}
            title={LABELS[t]}
            className={`jp-resolve-tab ${panel.tab === t ? 'jp-mod-current' : ''}`}
            onClick={() => select(t)}
            onKeyDown={e => {
              const i = TABS.indexOf(t);
              const next =
                e.key === 'ArrowRight'
                  ? TABS[(i + 1) % TABS.length]
                  : e.key === 'ArrowLeft'
                    ? TABS[(i + TABS.length - 1) % TABS.length]
                    : e.key === 'Home'
                      ? TABS[0]
                      : e.key === 'End'
                        ? TABS[TABS.length - 1]
                        : null;
              if (next) {
                e.preventDefault();
                select(next);
                document.getElementById(`jp-resolve-tab-${next}`)?.focus();
              }
            }}
          >
            {React.createElement(ICONS[t].react, { tag: 'span', className: 'jp-resolve-tab-icon' })}
            <span className="jp-resolve-tab-label">{LABELS[t]}</span>
          </button>
        ))}
      </div>
      <div
        className="jp-resolve-body"
        id="jp-resolve-tabpanel"
        role="tabpanel"
        aria-labelledby={`jp-resolve-tab-${panel.tab}`}
      >
        {panel.tab === 'chat' && <Chat model={props.model} rendermime={props.rendermime} />}
        {panel.tab === 'transcript' && <Transcript model={props.model} />}
        {panel.tab === 'sessions' && <Sessions model={props.model} onOpen={() => select('chat')} />}
        {panel.tab === 'runs' && <Runs model={props.model} onOpen={() => select('chat')} />}
        {panel.tab === 'artifacts' && (
          <Artifacts
            model={props.model}
            rendermime={props.rendermime}
            generation={panel.artifactsGeneration}
          />
        )}
        {panel.tab === 'status' && <Status model={props.model} />}
      </div>
    </>
  );
}

/** The Lumino widget hosting the React view. */
export class ResolvePanel extends ReactWidget {
  constructor(
    readonly model: ChatModel,
    rendermime: IRenderMimeRegistry
  ) {
    super();
    this.id = 'jp-resolve-panel';
    this.addClass('jp-resolve-panel');
    // everything the panel renders is untrusted, so it all passes this sanitizer
    this.rendermime = rendermime.clone({
      sanitizer: new RemoteMediaSanitizer(
        rendermime.sanitizer,
        () => model.server.health?.allowRemoteImages === true
      )
    });
  }

  /** The app's rendermime, its sanitizer also turning remote images into links. */
  readonly rendermime: IRenderMimeRegistry;

  tab: Tab = 'chat';
  artifactsGeneration = 0;

  setTab(tab: Tab): void {
    this.tab = tab;
    this.update();
  }

  /** Refresh the artifacts view (after a promotion). */
  refreshArtifacts(): void {
    this.artifactsGeneration++;
    this.update();
  }

  /** Put the keyboard focus in the message box. */
  focusInput(): void {
    this.setTab('chat');
    requestAnimationFrame(() =>
      this.node.querySelector<HTMLTextAreaElement>('.jp-resolve-input')?.focus()
    );
  }

  /** Shown: follow runs of the session started elsewhere (issue 40.4); hidden: stop asking. */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.model.watch.start();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this.model.watch.start();
    }
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.model.watch.stop();
  }

  dispose(): void {
    this.model.watch.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return (
      <UseSignal signal={this.model.changed}>
        {() => <PanelView model={this.model} rendermime={this.rendermime} panel={this} />}
      </UseSignal>
    );
  }
}
