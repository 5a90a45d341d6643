/**
 * What an inline completion sends around the cursor (pure: no DOM, no JupyterLab). In a notebook
 * the cells above are the prefix and the cells below the suffix; Markdown goes in as comments of
 * the cell's language so the model reads it as prose about the code; magic lines (`%resolve`,
 * `%%time`, `!pip`) are dropped from the context, and the cursor on one completes nothing, since
 * they are commands to IPython, not code the model should continue.
 */

/** One cell as the builder needs it. */
export interface ICellText {
  readonly type: 'code' | 'markdown' | 'raw';
  readonly source: string;
}

/** The editor around the cursor: the notebook's cells, which is active, and the cursor there. */
export interface IEditorText {
  readonly cells: readonly ICellText[];
  readonly active: number;
  /** The cursor's offset in the active cell's source. */
  readonly offset: number;
  readonly language: string;
}

/** The prefix and suffix sent to the server. */
export interface ICompletionText {
  readonly prefix: string;
  readonly suffix: string;
}

/** Characters of context sent before and after the cursor at most. */
export const MAX_PREFIX = 8000;
export const MAX_SUFFIX = 2000;

const LINE_COMMENT: Record<string, string> = {
  python: '#',
  r: '#',
  julia: '#',
  ruby: '#',
  bash: '#',
  sh: '#',
  javascript: '//',
  typescript: '//',
  c: '//',
  cpp: '//',
  'c++': '//',
  java: '//',
  rust: '//',
  go: '//',
  scala: '//',
  sql: '--',
  haskell: '--',
  lua: '--'
};

/** The line-comment marker of a language (`#` when unknown). */
export function commentOf(language: string): string {
  return LINE_COMMENT[language.toLowerCase()] ?? '#';
}

/** True for an IPython magic or shell line: `%resolve ...`, `%%time`, `!ls`. */
export function isMagicLine(line: string): boolean {
  const trimmed = line.trimStart();
  return trimmed.startsWith('%') || trimmed.startsWith('!');
}

/** A cell's text as context: code without its magic lines, Markdown as comments, raw dropped. */
export function cellAsContext(cell: ICellText, language: string): string {
  if (cell.type === 'raw') {
    return '';
  }
  if (cell.type === 'markdown') {
    const marker = commentOf(language);
    const lines = cell.source.split('\n').filter(line => line.trim() !== '');
    return lines.map(line => `${marker} ${line}`).join('\n');
  }
  if (cell.source.trimStart().startsWith('%%')) {
    return ''; // a cell magic makes the whole cell something other than the language
  }
  return cell.source
    .split('\n')
    .filter(line => !isMagicLine(line))
    .join('\n');
}

/** The line the cursor is on in `text`. */
function lineAt(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  const end = text.indexOf('\n', offset);
  return text.slice(start, end < 0 ? text.length : end);
}

/** True when a cell should get no completion: a magic line under the cursor or a cell magic. */
export function cursorInMagic(source: string, offset: number): boolean {
  return source.trimStart().startsWith('%%') || isMagicLine(lineAt(source, offset));
}

/** The last `max` characters, cut at a line start when one is near so no line comes half. */
export function keepTail(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  const tail = text.slice(text.length - max);
  const newline = tail.indexOf('\n');
  return newline >= 0 && newline < tail.length - 1 ? tail.slice(newline + 1) : tail;
}

/** The first `max` characters, cut at a line end when one is near. */
export function keepHead(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  const head = text.slice(0, max);
  const newline = head.lastIndexOf('\n');
  return newline > 0 ? head.slice(0, newline) : head;
}

function joinCells(parts: string[]): string {
  return parts.filter(part => part !== '').join('\n\n');
}

/**
 * The completion's prefix and suffix, or null when the cursor is on a magic line (nothing to
 * complete there). The active cell's own magic lines stay out too; its text around the cursor
 * is kept as typed.
 */
export function buildContext(
  editor: IEditorText,
  maxPrefix: number = MAX_PREFIX,
  maxSuffix: number = MAX_SUFFIX
): ICompletionText | null {
  const cell = editor.cells[editor.active];
  if (!cell || cursorInMagic(cell.source, editor.offset)) {
    return null;
  }
  const before = cell.source.slice(0, editor.offset);
  const after = cell.source.slice(editor.offset);
  const dropMagic = (text: string) =>
    text
      .split('\n')
      .filter((line, index, lines) => !isMagicLine(line) || index === lines.length - 1)
      .join('\n');
  const above = editor.cells
    .slice(0, editor.active)
    .map(c => cellAsContext(c, editor.language));
  const below = editor.cells.slice(editor.active + 1).map(c => cellAsContext(c, editor.language));
  const aboveText = joinCells(above);
  const belowText = joinCells(below);
  const prefix = (aboveText ? aboveText + '\n\n' : '') + dropMagic(before);
  const afterLines = after.split('\n');
  const suffixOwn = [afterLines[0], ...afterLines.slice(1).filter(l => !isMagicLine(l))].join(
    '\n'
  );
  const suffix = suffixOwn + (belowText ? '\n\n' + belowText : '');
  return { prefix: keepTail(prefix, maxPrefix), suffix: keepHead(suffix, maxSuffix) };
}

/** The language of a CodeMirror MIME type, for an editor outside a notebook. */
export function languageOfMime(mimeType: string | undefined): string {
  const mime = (mimeType ?? '').toLowerCase();
  if (mime.includes('python')) {
    return 'python';
  }
  const match = /^(?:text|application)\/(?:x-)?([a-z+#-]+)$/.exec(mime);
  return match ? match[1] : 'text';
}
