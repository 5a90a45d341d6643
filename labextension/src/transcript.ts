/**
 * A session's transcript as the panel shows it: user and assistant turns, tool calls with their
 * arguments and results, long texts cut (pure: no I/O, no DOM). Everything is shown as text.
 */
import { ITranscriptMessage } from './validate';

/** One entry of the transcript view. */
export interface ITranscriptItem {
  readonly kind: 'system' | 'user' | 'assistant' | 'call' | 'result';
  /** The tool's name, for calls and results. */
  readonly name: string | null;
  readonly text: string;
  /** Characters cut from `text`, 0 when whole. */
  readonly cut: number;
}

/** Characters of a tool result or of call arguments shown before the cut. */
export const RESULT_CUT = 1200;
/** Characters of a user or assistant message shown before the cut. */
export const MESSAGE_CUT = 8000;

function cut(text: string, limit: number): { text: string; cut: number } {
  return text.length <= limit
    ? { text, cut: 0 }
    : { text: text.slice(0, limit), cut: text.length - limit };
}

function prettyArguments(args: string): string {
  try {
    const parsed = JSON.parse(args);
    const only = parsed && typeof parsed === 'object' ? Object.keys(parsed) : [];
    if (only.length === 1 && typeof parsed.code === 'string') {
      return parsed.code; // the python tool's code, as code
    }
    return JSON.stringify(parsed, null, 2);
  } catch {
    return args;
  }
}

/** The transcript's messages as view items, results named after the call they answer. */
export function transcriptItems(messages: readonly ITranscriptMessage[]): ITranscriptItem[] {
  const names = new Map<string, string>();
  const items: ITranscriptItem[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      const name = (m.tool_call_id && names.get(m.tool_call_id)) || 'tool';
      items.push({ kind: 'result', name, ...cut(m.content, RESULT_CUT) });
      continue;
    }
    if (m.content) {
      items.push({ kind: m.role, name: null, ...cut(m.content, MESSAGE_CUT) });
    }
    for (const call of m.tool_calls) {
      names.set(call.id, call.name);
      const args = cut(prettyArguments(call.arguments), RESULT_CUT);
      items.push({ kind: 'call', name: call.name, ...args });
    }
  }
  return items;
}
