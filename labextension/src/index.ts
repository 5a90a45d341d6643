/** Plugins only: the panel, its commands, and the notebook integration. */
import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { Signal } from '@lumino/signaling';
import { PageConfig } from '@jupyterlab/coreutils';
import { ChatModel } from './model';
import { ITabStore } from './state';
import { askAboutCell, notebookActions, promoteOutput } from './notebook';
import { ResolvePanel } from './panel/Panel';
import { parseSettings } from './settings';
import { CommandIDs, IResolveChat } from './tokens';
import { resolveIcon } from './icon';
import { completionPlugin } from './completion/plugin';
import { authorshipPlugin } from './cellmarker';

/** The panel's commands (open, new session, stop, artifacts), its shortcut and palette items. */
function addPanelCommands(
  app: JupyterFrontEnd,
  shell: ILabShell,
  panel: ResolvePanel,
  model: ChatModel,
  palette: ICommandPalette | null
): void {
  app.commands.addCommand(CommandIDs.openPanel, {
    label: 'Open the Resolve panel',
    caption: 'Chat with the research agent',
    execute: () => {
      shell.activateById(panel.id);
      panel.focusInput();
    }
  });
  app.commands.addCommand(CommandIDs.newSession, {
    label: 'Resolve: new session',
    execute: () => {
      model.newSession();
      shell.activateById(panel.id);
      panel.focusInput();
    }
  });
  app.commands.addCommand(CommandIDs.stop, {
    label: 'Resolve: stop the running answer',
    isEnabled: () => model.busy,
    execute: () => model.stop()
  });
  app.commands.addCommand(CommandIDs.openArtifacts, {
    label: 'Resolve: artifacts',
    execute: () => {
      shell.activateById(panel.id);
      panel.setTab('artifacts');
    }
  });
  app.commands.addKeyBinding({
    command: CommandIDs.openPanel,
    keys: ['Accel Alt R'],
    selector: 'body'
  });
  for (const command of [
    CommandIDs.openPanel,
    CommandIDs.newSession,
    CommandIDs.stop,
    CommandIDs.openArtifacts
  ]) {
    palette?.addItem({ command, category: 'Resolve' });
  }
}

/** The chat as other plugins reach it (`IResolveChat`): send, ask about a notebook, artifacts. */
function chatService(shell: ILabShell, panel: ResolvePanel, model: ChatModel): IResolveChat {
  const artifactsChanged = new Signal<IResolveChat, void>({} as IResolveChat);
  const chat: IResolveChat = {
    send: async (text, options) => {
      shell.activateById(panel.id);
      panel.setTab('chat');
      await model.send(text, options ?? {});
    },
    artifactsChanged,
    notifyArtifactsChanged: () => {
      panel.refreshArtifacts();
      artifactsChanged.emit();
    },
    askAboutNotebook: notebook => {
      shell.activateById(panel.id);
      model.bindNotebook(notebook);
      panel.focusInput();
    },
    followNotebook: notebook => model.followNotebook(notebook),
    setNotebookActions: actions => {
      model.decisions.notebookActions = actions;
    }
  };
  return chat;
}

/** This tab's `sessionStorage`, or null where the browser gives none. */
function tabStorage(): ITabStore | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

const panelPlugin: JupyterFrontEndPlugin<IResolveChat> = {
  id: 'jupyter-resolve:panel',
  description: 'The Resolve panel: chat with the research agent, runs, sessions and artifacts.',
  autoStart: true,
  requires: [IRenderMimeRegistry, ILabShell, IStateDB],
  optional: [ICommandPalette, ILayoutRestorer, ISettingRegistry],
  provides: IResolveChat,
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    shell: ILabShell,
    state: IStateDB,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null
  ): IResolveChat => {
    // sessions and the live run live in the workspace's state database, and in the tab until
    // the workspace is saved (a moment after each change)
    const model = new ChatModel(state, tabStorage(), `${PageConfig.getOption('workspace')}/`);
    const panel = new ResolvePanel(model, rendermime);
    panel.title.icon = resolveIcon;
    panel.title.caption = 'Resolve';
    shell.add(panel, 'right', { rank: 200 });
    restorer?.add(panel, 'jupyter-resolve-panel');
    void model.start();
    settingRegistry
      ?.load(panelPlugin.id)
      .then(settings => {
        const follow = () => model.setSettings(parseSettings(settings.composite));
        follow();
        settings.changed.connect(follow);
      })
      .catch(reason => console.warn('jupyter-resolve: the panel settings did not load:', reason));

    addPanelCommands(app, shell, panel, model, palette);
    return chatService(shell, panel, model);
  }
};

const notebookPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-resolve:notebook',
  description:
    'Ask Resolve about a notebook or a cell; promote a cell output to an artifact; ' +
    'accept proposed cells.',
  autoStart: true,
  requires: [IResolveChat, INotebookTracker],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    chat: IResolveChat,
    tracker: INotebookTracker,
    palette: ICommandPalette | null
  ): void => {
    chat.setNotebookActions(notebookActions(app, tracker));
    // the chip names the notebook in front: switching notebooks moves a bound chat along
    tracker.currentChanged.connect((_, current) =>
      chat.followNotebook(current?.context.path ?? null)
    );
    app.commands.addCommand(CommandIDs.askAboutNotebook, {
      label: 'Ask Resolve about this notebook',
      caption: 'Chat about this notebook: its tools act on it, and @name mentions its variables',
      icon: resolveIcon,
      isEnabled: () => tracker.currentWidget !== null,
      execute: () => {
        const panel = tracker.currentWidget;
        if (panel) {
          chat.askAboutNotebook(panel.context.path);
        }
      }
    });
    palette?.addItem({ command: CommandIDs.askAboutNotebook, category: 'Resolve' });
    app.commands.addCommand(CommandIDs.askAboutCell, {
      label: 'Ask Resolve about this cell',
      isEnabled: () => tracker.activeCell !== null,
      execute: () =>
        askAboutCell(
          tracker,
          app.contextMenuHitTest(n => n.classList.contains('jp-Cell')),
          chat
        )
    });
    app.commands.addCommand(CommandIDs.promoteOutput, {
      label: 'Promote output',
      caption: 'Make this output an immutable artifact with provenance',
      execute: () =>
        promoteOutput(
          tracker,
          app.contextMenuHitTest(n => n.classList.contains('jp-OutputArea-child')),
          chat,
          () => void app.commands.execute(CommandIDs.openArtifacts)
        )
    });
    app.contextMenu.addItem({
      command: CommandIDs.askAboutCell,
      selector: '.jp-Notebook .jp-Cell',
      rank: 20
    });
    app.contextMenu.addItem({
      command: CommandIDs.askAboutNotebook,
      selector: '.jp-Notebook',
      rank: 21
    });
    app.contextMenu.addItem({
      command: CommandIDs.promoteOutput,
      selector: '.jp-Notebook .jp-OutputArea-child',
      rank: 0
    });
  }
};

export default [panelPlugin, notebookPlugin, completionPlugin, authorshipPlugin];
