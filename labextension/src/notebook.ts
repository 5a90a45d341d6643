/**
 * Notebook integration: what a cell says, as text for the agent, which output was clicked, and
 * accepted proposals put into the open notebook's model.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { InputDialog, Notification } from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import * as api from './api';
import { askTitle } from './promote';
import { placement, sourceFollower } from './proposal';
import { describeError } from './request';
import { INotebookActions, IResolveChat } from './tokens';

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
const MAX_OUTPUT = 8000;

function outputText(output: Record<string, unknown>): string {
  const type = output.output_type;
  if (type === 'stream') {
    return String(Array.isArray(output.text) ? output.text.join('') : output.text ?? '');
  }
  if (type === 'error') {
    const tb = Array.isArray(output.traceback) ? output.traceback.join('\n') : '';
    return (tb || `${output.ename}: ${output.evalue}`).replace(ANSI, '');
  }
  const data = (output.data ?? {}) as Record<string, unknown>;
  const plain = data['text/plain'];
  const text = Array.isArray(plain) ? plain.join('') : plain;
  const images = Object.keys(data).filter(m => m.startsWith('image/'));
  const parts: string[] = [];
  if (typeof text === 'string') {
    parts.push(text);
  }
  if (images.length) {
    parts.push(`[${images.join(', ')} output not included]`);
  }
  return parts.join('\n');
}

/** The message "Ask Resolve about this cell" sends: the question, the source, the outputs. */
export function cellMessage(cell: Cell, path: string, question: string): string {
  const model = cell.model;
  const lines = [question.trim(), '', `Cell ${model.type} of \`${path}\`:`, ''];
  const fence = model.type === 'code' ? '```python' : '```markdown';
  lines.push(fence, model.sharedModel.getSource(), '```');
  if (cell instanceof CodeCell) {
    const outputs = cell.model.outputs.toJSON() as unknown as Record<string, unknown>[];
    let text = outputs.map(outputText).filter(Boolean).join('\n');
    if (text.length > MAX_OUTPUT) {
      text = text.slice(0, MAX_OUTPUT) + `\n[… cut at ${MAX_OUTPUT} characters]`;
    }
    if (text) {
      lines.push('', 'Its outputs:', '', '```text', text, '```');
    }
  }
  return lines.join('\n');
}

/** The output a context menu was opened on: its cell and index in the cell's output area. */
export function outputAt(
  node: HTMLElement,
  panel: NotebookPanel
): { cell: CodeCell; index: number } | null {
  const child = node.closest('.jp-OutputArea-child');
  const cellNode = node.closest('.jp-Cell');
  if (!child || !cellNode) {
    return null;
  }
  const cell = panel.content.widgets.find(w => w.node === cellNode);
  if (!(cell instanceof CodeCell)) {
    return null;
  }
  const siblings = Array.from(child.parentElement?.children ?? []).filter(n =>
    n.classList.contains('jp-OutputArea-child')
  );
  const index = siblings.indexOf(child);
  return index < 0 ? null : { cell, index };
}

/**
 * The cell a context menu was opened on (`node`, inside it) and its notebook; without a node
 * (the palette, a shortcut) the active cell of the current notebook.
 */
export function cellAt(
  tracker: INotebookTracker,
  node: HTMLElement | undefined
): { panel: NotebookPanel; cell: Cell } | null {
  const cellNode = node?.closest('.jp-Cell');
  if (cellNode) {
    const panel = tracker.find(p => p.node.contains(cellNode));
    const cell = panel?.content.widgets.find(w => w.node === cellNode);
    if (panel && cell) {
      return { panel, cell };
    }
  }
  const panel = tracker.currentWidget;
  const cell = tracker.activeCell;
  return panel && cell ? { panel, cell } : null;
}

/**
 * "Ask Resolve about this cell": ask for the question, then send it with the cell that was
 * right-clicked (which need not be the active one).
 */
export async function askAboutCell(
  tracker: INotebookTracker,
  node: HTMLElement | undefined,
  chat: IResolveChat
): Promise<void> {
  const hit = cellAt(tracker, node);
  if (!hit) {
    return;
  }
  const { panel, cell } = hit;
  const answer = await InputDialog.getText({
    title: 'Ask Resolve about this cell',
    label: 'Your question',
    text: 'Explain what this cell does and what its output shows.'
  });
  if (!answer.button.accept || !answer.value?.trim()) {
    return;
  }
  const path = panel.context.path;
  await chat.send(cellMessage(cell, path, answer.value), { notebook: path });
}

/**
 * "Promote output": `POST resolve/api/artifacts` for the output; alone, the notebook is saved
 * first if needed (the server reads the file), never under collaboration.
 */
export async function promoteOutput(
  tracker: INotebookTracker,
  node: HTMLElement | undefined,
  chat: IResolveChat,
  showArtifacts: () => void
): Promise<void> {
  const panel = tracker.currentWidget;
  const hit = panel && node ? outputAt(node, panel) : null;
  if (!panel || !hit) {
    Notification.warning('Right-click an output of a notebook cell to promote it.');
    return;
  }
  const count = hit.cell.model.executionCount;
  const name = panel.context.path.split('/').pop() ?? panel.context.path;
  const title = await askTitle(`${name} ${count ? `Out[${count}]` : 'output'}`);
  if (title === null) {
    return;
  }
  // Under real-time collaboration the server reads the output from the live room and records
  // the id there, so it reaches every page; a save or revert here would overwrite other
  // people's typing (issue 40.1).
  const shared = panel.context.model.collaborative;
  try {
    if (!shared && panel.context.model.dirty) {
      await panel.context.save(); // the server promotes what is on disk
    }
    const artifact = await api.promote({
      notebook: panel.context.path,
      cell_id: hit.cell.model.id,
      output_index: hit.index,
      title
    });
    // Alone, the server recorded the artifact id in the output's metadata on disk: load that
    // version, or the next save would find the file changed under it. Unsaved edits win.
    if (!shared && !panel.context.model.dirty) {
      await panel.context.revert();
    }
    Notification.success(`Promoted: ${artifact.title} (${artifact.id})`, {
      autoClose: 5000,
      actions: [{ label: 'Show', callback: showArtifacts }]
    });
    chat.notifyArtifactsChanged();
  } catch (error) {
    Notification.error(describeError(error, 'Promote output'));
  }
}

function openPanel(tracker: INotebookTracker, path: string): NotebookPanel | undefined {
  return tracker.find(panel => panel.context.path === path);
}

/** Cell `cellId`'s source in the open notebook `path`, or null (not open, no such cell). */
function liveSource(tracker: INotebookTracker, path: string, cellId: string): string | null {
  const model = openPanel(tracker, path)?.content.model;
  const cell = model?.sharedModel.cells.find(c => c.getId() === cellId);
  return cell ? cell.getSource() : null;
}

/**
 * Follow cell `cellId` of notebook `path`: every change of the open notebook's model (local
 * or, through the shared document, another person's) is checked, and `changed` is called when
 * the cell's source differs; a notebook opened later is followed from then on.
 */
function followSource(
  tracker: INotebookTracker,
  path: string,
  cellId: string,
  changed: () => void
): () => void {
  const check = sourceFollower(() => liveSource(tracker, path, cellId), changed);
  let followed: NotebookPanel | undefined;
  const attach = () => {
    const panel = openPanel(tracker, path);
    if (panel !== followed) {
      followed?.context.model.contentChanged.disconnect(check);
      followed = panel;
      panel?.context.model.contentChanged.connect(check);
    }
    check();
  };
  attach();
  tracker.widgetAdded.connect(attach);
  return () => {
    tracker.widgetAdded.disconnect(attach);
    followed?.context.model.contentChanged.disconnect(check);
  };
}

/**
 * How the panel reads and changes notebooks. Cells go in through the notebook's shared model,
 * as JupyterLab's own insert does, in one transaction: the person's unsaved edits stay, and
 * undo takes the accepted cells out again.
 */
export function notebookActions(app: JupyterFrontEnd, tracker: INotebookTracker): INotebookActions {
  return {
    liveSource: (path, cellId) => liveSource(tracker, path, cellId),
    cellIds: path => {
      const model = openPanel(tracker, path)?.content.model;
      return model ? model.sharedModel.cells.map(c => c.getId()) : null;
    },
    shared: path => {
      const panel = openPanel(tracker, path);
      return panel ? panel.context.model.collaborative === true : null;
    },
    followSource: (path, cellId, changed) => followSource(tracker, path, cellId, changed),
    open: async (path, withKernel) => {
      let panel = openPanel(tracker, path);
      if (!panel) {
        // the document manager opens it (or reveals it if it is open under another factory)
        await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
        panel = openPanel(tracker, path);
      }
      if (!panel) {
        throw new Error(`${path} could not be opened as a notebook`);
      }
      await panel.context.ready;
      if (withKernel) {
        // its kernel started (or attached), so "Accept and run" finds it the first time (40.3)
        await panel.sessionContext.ready;
      }
    },
    reveal: async (path, cellId) => {
      await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
      const panel = openPanel(tracker, path);
      if (!panel) {
        throw new Error(`${path} could not be opened as a notebook`);
      }
      await panel.context.ready;
      const index = panel.content.widgets.findIndex(w => w.model.id === cellId);
      if (index < 0) {
        throw new Error(`${path} has no cell ${cellId} any more`);
      }
      panel.content.activeCellIndex = index;
      await panel.content.scrollToItem(index).catch(() => undefined);
    },
    apply: async (proposal, cells) => {
      const panel = openPanel(tracker, proposal.notebook);
      if (!panel?.content.model) {
        throw new Error(`${proposal.notebook} is not open`);
      }
      await panel.context.ready;
      const shared = panel.content.model!.sharedModel;
      const ids = shared.cells.map(c => c.getId());
      const place = placement(ids, proposal);
      shared.transact(() => {
        if (place.replace) {
          shared.deleteCell(place.index);
        }
        // plain JSON (nbformat cells): the model's types want its JSON value types
        const json = JSON.parse(JSON.stringify(cells)) as Parameters<typeof shared.insertCells>[1];
        shared.insertCells(place.index, json);
      });
      // show the first accepted cell
      panel.content.activeCellIndex = place.index;
      void panel.content.scrollToItem(place.index).catch(() => undefined);
      return place;
    }
  };
}
