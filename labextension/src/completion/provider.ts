/**
 * The Resolve inline completion provider for JupyterLab's completion manager. `fetch` waits out
 * the debounce, starts one streamed request and answers with the first text (`isIncomplete`
 * while the model is still writing); `stream(token)` then yields the growing text to the end.
 */
import type {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import { NotebookPanel } from '@jupyterlab/notebook';
import { buildContext, ICellText, ICompletionText, languageOfMime } from './context';
import { ICompletionBody, streamCompletion } from './client';
import { DEFAULT_COMPLETION_SETTINGS, ICompletionSettings, languageEnabled } from './settings';
import { PendingCompletion } from './pending';

function sleep(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms));
}

/** The notebook's cells, the language and where the cursor is; a plain editor is one cell. */
function editorText(
  request: CompletionHandler.IRequest,
  context: IInlineCompletionContext
): { cells: ICellText[]; active: number; language: string; path?: string; cellId?: string } {
  const widget = context.widget;
  if (widget instanceof NotebookPanel) {
    const notebook = widget.content;
    const cells: ICellText[] = notebook.widgets.map(cell => ({
      type: cell.model.type === 'markdown' || cell.model.type === 'raw' ? cell.model.type : 'code',
      source: cell.model.sharedModel.getSource()
    }));
    const active = Math.max(0, notebook.activeCellIndex);
    cells[active] = { type: 'code', source: request.text };
    const language =
      widget.model?.defaultKernelLanguage || languageOfMime(request.mimeType) || 'python';
    const cellId = notebook.activeCell?.model.id;
    return { cells, active, language, path: widget.context.path, cellId };
  }
  return {
    cells: [{ type: 'code', source: request.text }],
    active: 0,
    language: languageOfMime(request.mimeType)
  };
}

export class ResolveInlineProvider implements IInlineCompletionProvider {
  readonly name = 'Resolve';
  readonly identifier = 'jupyter-resolve';
  /** On once installed; our own settings debounce and time out, so JupyterLab's wait is 0. */
  readonly schema = {
    properties: {},
    default: { enabled: true, debouncerDelay: 0, timeout: 30000 }
  };
  settings: ICompletionSettings = DEFAULT_COMPLETION_SETTINGS;
  private _generation = 0;
  private _pending = new Map<string, PendingCompletion>();

  async fetch(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): Promise<IInlineCompletionList> {
    const editor = editorText(request, context);
    if (!languageEnabled(this.settings, editor.language)) {
      return { items: [] };
    }
    const text = buildContext({ ...editor, offset: request.offset });
    if (text === null) {
      return { items: [] };
    }
    const generation = ++this._generation;
    await sleep(this.settings.debounce);
    if (generation !== this._generation) {
      return { items: [] }; // typing went on: a newer request takes over
    }
    const token = `resolve-${generation}`;
    const pending = this._start(token, text, editor);
    await pending.changed(0);
    return { items: [pending.item(token)] };
  }

  async *stream(token: string): AsyncGenerator<{ response: IInlineCompletionItem }> {
    const pending = this._pending.get(token);
    if (!pending) {
      return;
    }
    try {
      for await (const item of pending.updates(token)) {
        yield { response: item };
      }
    } finally {
      this._pending.delete(token);
    }
  }

  /** Start the request; earlier ones are aborted (only the newest is shown). */
  private _start(
    token: string,
    text: ICompletionText,
    editor: { language: string; path?: string; cellId?: string }
  ): PendingCompletion {
    for (const old of this._pending.values()) {
      old.controller.abort();
    }
    this._pending.clear();
    const pending = new PendingCompletion();
    this._pending.set(token, pending);
    const body: ICompletionBody = {
      prefix: text.prefix,
      suffix: text.suffix,
      language: editor.language,
      ...(editor.path ? { path: editor.path } : {}),
      ...(editor.cellId ? { cell_id: editor.cellId } : {}),
      ...(this.settings.model ? { model: this.settings.model } : {})
    };
    const timer = setTimeout(() => pending.controller.abort('timeout'), this.settings.timeout);
    const callbacks = {
      onDelta: (delta: string) => pending.append(delta),
      onDone: () => pending.finish()
    };
    streamCompletion(body, callbacks, pending.controller.signal)
      .catch((error: Error) => {
        const signal = pending.controller.signal;
        if (signal.aborted && signal.reason !== 'timeout') {
          pending.finish(); // superseded by a newer request: nobody shows this one
        } else {
          pending.fail(
            signal.aborted
              ? `Resolve: no completion within ${this.settings.timeout} ms`
              : `Resolve: ${error.message}`
          );
        }
      })
      .finally(() => clearTimeout(timer));
    return pending;
  }
}
