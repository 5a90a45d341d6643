/**
 * `@name` mentions of the bound notebook's variables (issue 17): which word the caret is
 * completing, the names that match it, the text once one is picked, and the names a message
 * mentions (pure: no I/O, no DOM).
 */
import { IVariable } from './validate';

/** The `@word` being typed: where its `@` is and what follows it up to the caret. */
export interface IMentionQuery {
  /** Index of the `@`. */
  readonly start: number;
  /** The identifier characters typed after it (may be empty). */
  readonly query: string;
}

const IDENT_CHAR = /[A-Za-z0-9_]/;
/** What may not stand before a mention's `@`: a word, a dot or another `@` (e-mail addresses). */
const BEFORE = /[A-Za-z0-9_.@]/;
const MENTION = /(^|[^A-Za-z0-9_.@])@([A-Za-z_][A-Za-z0-9_]*)/g;

/** The mention the caret is in, or null (e.g. `me@host`, or the caret past a space). */
export function mentionAt(text: string, caret: number): IMentionQuery | null {
  let i = caret;
  while (i > 0 && IDENT_CHAR.test(text[i - 1])) {
    i--;
  }
  if (i === 0 || text[i - 1] !== '@') {
    return null;
  }
  const at = i - 1;
  if (at > 0 && BEFORE.test(text[at - 1])) {
    return null;
  }
  const query = text.slice(i, caret);
  if (/^[0-9]/.test(query)) {
    return null;
  }
  return { start: at, query };
}

/** Variables matching `query`: names starting with it first, then containing it (any case). */
export function matchVariables(
  variables: readonly IVariable[],
  query: string,
  limit = 20
): IVariable[] {
  const q = query.toLowerCase();
  const starts = variables.filter(v => v.name.toLowerCase().startsWith(q));
  const contains = variables.filter(
    v => !v.name.toLowerCase().startsWith(q) && v.name.toLowerCase().includes(q)
  );
  return [...starts, ...contains].slice(0, limit);
}

/** The text with the mention at `at` completed to `@name `, and where the caret goes. */
export function completeMention(
  text: string,
  caret: number,
  at: IMentionQuery,
  name: string
): { text: string; caret: number } {
  let end = caret;
  while (end < text.length && IDENT_CHAR.test(text[end])) {
    end++; // the rest of a word the caret was inside
  }
  const rest = text.slice(end);
  const inserted = `@${name}` + (rest.startsWith(' ') ? '' : ' ');
  return { text: text.slice(0, at.start) + inserted + rest, caret: at.start + inserted.length };
}

/** The names `text` mentions that are among `known`, once each, in order. */
export function mentionedNames(text: string, known: Iterable<string>): string[] {
  const names = new Set(known);
  const found: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const name = match[2];
    if (names.has(name) && !found.includes(name)) {
      found.push(name);
    }
  }
  return found;
}

/** The `@names` in `text` that are not among `known` (nothing to resolve them to), once each. */
export function unknownMentions(text: string, known: Iterable<string>): string[] {
  const names = new Set(known);
  const found: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const name = match[2];
    if (!names.has(name) && !found.includes(name)) {
      found.push(name);
    }
  }
  return found;
}

/** The note shown before sending a message whose `@names` resolve to nothing. */
export function unknownMentionsNote(names: readonly string[], notebook: string): string {
  const listed = names.map(n => `@${n}`).join(', ');
  const verb = names.length === 1 ? 'is not a variable' : 'are not variables';
  return `${listed} ${verb} in ${notebook}'s kernel, so the model would not be told about it. Send again to send the message as it is.`;
}

/** What the completion list shows after a name: its type and shape, e.g. "DataFrame (3, 2)". */
export function variableHint(variable: IVariable): string {
  const dims = variable.shape;
  if (!dims) {
    return variable.type;
  }
  return `${variable.type} (${dims.join(', ')}${dims.length === 1 ? ',' : ''})`;
}
