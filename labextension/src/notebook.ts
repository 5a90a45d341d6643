/** Notebook integration: what a cell says, as text for the agent, and which output was clicked. */
import { InputDialog, Notification } from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import * as api from './api';
import { describeError } from './model';
import { IResolveChat } from './tokens';

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

/** "Ask Resolve about this cell": ask for the question, then send it with the cell. */
export async function askAboutCell(tracker: INotebookTracker, chat: IResolveChat): Promise<void> {
  const panel = tracker.currentWidget;
  const cell = tracker.activeCell;
  if (!panel || !cell) {
    return;
  }
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

/** "Promote output": save the notebook if needed, then `POST resolve/api/artifacts`. */
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
  try {
    if (panel.context.model.dirty) {
      await panel.context.save(); // the server promotes what is on disk
    }
    const artifact = await api.promote({
      notebook: panel.context.path,
      cell_id: hit.cell.model.id,
      output_index: hit.index
    });
    // The server recorded the artifact id in the output's metadata on disk: load that version,
    // or the next save would find the file changed under it. Unsaved edits made meanwhile win.
    if (!panel.context.model.dirty) {
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
