/** The inline completion plugin: the provider, its settings and the status-bar toggle. */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICompletionProviderManager } from '@jupyterlab/completer';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Widget } from '@lumino/widgets';
import { ResolveInlineProvider } from './provider';
import { parseCompletionSettings } from './settings';

const PLUGIN_ID = 'jupyter-resolve:completion';

/** A status-bar item naming the state; a click flips `enabled` in the settings. */
class CompletionToggle extends Widget {
  constructor(private readonly _flip: () => void) {
    super({ node: document.createElement('button') });
    this.addClass('jp-resolve-CompletionToggle');
    this.node.addEventListener('click', () => this._flip());
    this.showState(true);
  }

  showState(enabled: boolean): void {
    this.node.textContent = enabled ? 'Resolve completion: on' : 'Resolve completion: off';
    this.node.title = enabled
      ? 'Inline completions from Resolve are on; click to turn them off'
      : 'Inline completions from Resolve are off; click to turn them on';
    this.node.dataset.enabled = String(enabled);
  }
}

export const completionPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Inline (ghost text) completions from the Resolve gateway in notebooks and editors.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  optional: [ISettingRegistry, IStatusBar],
  activate: (
    _app: JupyterFrontEnd,
    manager: ICompletionProviderManager,
    settingRegistry: ISettingRegistry | null,
    statusBar: IStatusBar | null
  ): void => {
    const provider = new ResolveInlineProvider();
    manager.registerInlineProvider(provider);
    if (!settingRegistry) {
      return;
    }
    settingRegistry
      .load(PLUGIN_ID)
      .then(settings => {
        const toggle = new CompletionToggle(() => {
          void settings.set('enabled', !provider.settings.enabled);
        });
        const follow = () => {
          provider.settings = parseCompletionSettings(settings.composite);
          toggle.showState(provider.settings.enabled);
        };
        follow();
        settings.changed.connect(follow);
        statusBar?.registerStatusItem(`${PLUGIN_ID}:status`, {
          item: toggle,
          align: 'left',
          rank: 50
        });
      })
      .catch(reason => console.warn('jupyter-resolve: the completion settings did not load:', reason));
  }
};
