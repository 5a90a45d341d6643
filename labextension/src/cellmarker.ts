/**
 * A discreet marker on the cells the agent wrote and a person accepted (issue 49.3): a small
 * "agent" badge by the cell's prompt whose tooltip names the run, the model, who accepted it and
 * when, and whether the cell was edited since (its source's sha256 against the accepted one,
 * computed again as the source changes; dashed once edited).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { authorshipOf, authorshipTitle, editedSince } from './provenance';

const MARKED = 'jp-resolve-authored';
const BADGE = 'jp-resolve-authored-badge';
const DEBOUNCE_MS = 300;

async function sha256Hex(text: string): Promise<string | null> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) {
    return null; // plain HTTP off localhost: edits are shown as unknown
  }
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map(b => b.toString(16).padStart(2, '0')).join('');
}

/** Put the cell's badge in place, or take it away (the metadata went, or never was ours). */
async function mark(cell: Cell): Promise<void> {
  if (cell.isDisposed) {
    return;
  }
  const authorship = authorshipOf({ resolve: cell.model.getMetadata('resolve') });
  let badge = cell.node.querySelector<HTMLElement>(`:scope .${BADGE}`);
  if (!authorship) {
    badge?.remove();
    cell.removeClass(MARKED);
    return;
  }
  const digest = await sha256Hex(cell.model.sharedModel.getSource());
  if (cell.isDisposed) {
    return;
  }
  const edited = editedSince(authorship, digest);
  if (!badge) {
    badge = document.createElement('span');
    badge.className = BADGE;
    badge.textContent = 'agent';
    const wrapper = cell.node.querySelector('.jp-Cell-inputWrapper') ?? cell.node;
    wrapper.prepend(badge);
  }
  cell.addClass(MARKED);
  badge.classList.toggle('jp-mod-edited', edited === true);
  badge.title = authorshipTitle(authorship, edited);
  badge.setAttribute('aria-label', badge.title);
}

function follow(cell: Cell, followed: WeakSet<Cell>): void {
  if (followed.has(cell)) {
    return;
  }
  followed.add(cell);
  let timer: ReturnType<typeof setTimeout> | null = null;
  const later = (): void => {
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => void mark(cell), DEBOUNCE_MS);
  };
  cell.model.contentChanged.connect(later);
  cell.model.metadataChanged.connect(later);
  void mark(cell);
}

function watch(panel: NotebookPanel, followed: WeakSet<Cell>): void {
  const notebook = panel.content;
  const all = (): void => notebook.widgets.forEach(cell => follow(cell, followed));
  void panel.context.ready.then(all);
  notebook.model?.cells.changed.connect(() => setTimeout(all, 0));
}

/** Mark the agent-written cells of every notebook the tracker sees, now and as they open. */
export function markAuthoredCells(tracker: INotebookTracker): void {
  const followed = new WeakSet<Cell>();
  tracker.forEach(panel => watch(panel, followed));
  tracker.widgetAdded.connect((_, panel) => watch(panel, followed));
}

/** The marker, as a plugin of its own (it needs only the notebooks). */
export const authorshipPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-resolve:authorship',
  description: 'Mark the cells the agent wrote and a person accepted, and whether edited since.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    markAuthoredCells(tracker);
  }
};
