/**
 * The run event contract (DESIGN 3.6), checked where events enter: an event with an unknown
 * type or a missing field is refused here, so the panel folds typed values only.
 */
import { isObject, optionalString, ShapeError, sourceText } from './shapes';

/** The normalized event types of DESIGN 3.6. */
export const EVENT_TYPES = [
  'run.started',
  'text.delta',
  'reasoning.delta',
  'tool.writing',
  'tool.requested',
  'tool.approval',
  'tool.started',
  'tool.output',
  'tool.completed',
  'usage',
  'run.error',
  'run.completed',
  'task.started',
  'task.completed',
  'context.compacted',
  'notebook.proposal',
  'notebook.decision',
  'run.message'
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A MIME bundle as Jupyter outputs carry it. */
export type MimeBundle = { readonly [mime: string]: unknown };

/** One normalized event of a run. */
export interface IRunEvent {
  readonly seq: number;
  readonly type: EventType;
  readonly data: IEventData;
}

/** The union of every event's fields (each event carries a subset, `run_id` always). */
export interface IEventData {
  /** Every run event carries it; task.* events carry `task_id` instead. */
  readonly run_id: string;
  readonly session_id?: string;
  readonly goal?: string;
  /** `run.started`: the message that began the run. */
  readonly prompt?: string;
  readonly chain?: string[];
  readonly runs?: string[];
  readonly roles?: string[];
  readonly soul?: string | null;
  /** `run.started`: the external agent driving the run (issue 36). */
  readonly agent?: string | null;
  readonly model?: string;
  /** `run.started`: the rounds budget, and the cost budget in USD when one is set. */
  readonly budget?: { readonly rounds?: number; readonly cost?: number | null };
  readonly text?: string;
  readonly call_id?: string;
  readonly name?: string;
  /** `tool.writing`: the call's place in its round, and about how many tokens it has so far. */
  readonly index?: number;
  readonly tokens?: number;
  readonly arguments?: unknown;
  readonly state?: 'waiting' | 'approved' | 'denied';
  readonly ok?: boolean;
  readonly output?: string;
  readonly mime?: MimeBundle | null;
  readonly truncated?: boolean;
  readonly ms?: number;
  /** `tool.output`: what a running call printed (stdout, stderr) or displayed, live. */
  readonly stream?: 'stdout' | 'stderr' | 'display';
  readonly display_id?: string;
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  /** `usage`: prompt tokens read from / written to the provider's cache (issue 19). */
  readonly cached_tokens?: number;
  readonly cache_write_tokens?: number;
  /** `usage`, when the model's price is known: this completion's cost and the run's, USD. */
  readonly cost?: number;
  readonly run_cost?: number;
  /**
   * `tool.requested`: the provider's signed thinking blocks of the turn (opaque, kept so the
   * server can send them back; never rendered).
   */
  readonly thinking_blocks?: unknown[];
  readonly code?: string;
  readonly message?: string;
  /** `run.message`: a person's steering message (its id, as its post answered) reached here. */
  readonly id?: string;
  readonly reason?: string;
  /** `run.completed`: the ids of steering messages still waiting when the run ended. */
  readonly undelivered_messages?: string[];
  readonly rounds?: number;
  readonly summary?: { readonly text?: string; readonly [key: string]: unknown } | null;
  readonly task_id?: string;
  readonly role?: string;
  readonly parent?: string | null;
  /** `run.started`: the variables the person mentioned, as the model was told them (issue 17). */
  readonly mentions?: IMention[];
  /** `run.started`: what the context was built from (DESIGN 9.1). */
  readonly context?: IRunContext;
  /** `notebook.proposal` / `notebook.decision`. */
  readonly proposal_id?: string;
  readonly notebook?: string;
  readonly cells?: IProposedCell[];
  readonly after_cell_id?: string | null;
  readonly replace_cell_id?: string | null;
  readonly replaced_source?: string | null;
  readonly note?: string | null;
  readonly decision?: 'accepted' | 'rejected';
  readonly edited?: boolean;
  readonly ran?: boolean;
  readonly by?: string;
  /** `context.compacted` (DESIGN 9.1). */
  readonly before_tokens?: number;
  readonly after_tokens?: number;
  readonly turns?: number;
  readonly elided?: number;
  /** The runs whose turns the model's summary covers, and the summary's sha256. */
  readonly summarized_runs?: string[];
  readonly summary_sha256?: string;
  readonly [key: string]: unknown;
}

/** A variable the person mentioned (`@name`) and the description the model got. */
export interface IMention {
  readonly name: string;
  readonly description: string;
}

/** A project instructions file a run read (`AGENTS.md`, `.resolve/instructions.md`). */
export interface IInstructionFile {
  readonly path: string;
  readonly sha256: string;
  /** True when the file was longer than the cap and only its start was used. */
  readonly cut: boolean;
}

/** `run.started.context`. */
export interface IRunContext {
  readonly instructions?: IInstructionFile[];
  readonly [key: string]: unknown;
}

/** A cell of a proposal, as `notebook_propose` sends it. */
export interface IProposedCell {
  readonly cell_type: 'code' | 'markdown' | 'raw';
  readonly source: string;
}

const REQUIRED: { [T in EventType]: readonly string[] } = {
  'run.started': ['session_id'],
  'text.delta': ['text'],
  'reasoning.delta': ['text'],
  'tool.writing': ['name'],
  'tool.requested': ['call_id', 'name'],
  'tool.approval': ['call_id', 'state'],
  'tool.started': ['call_id'],
  'tool.output': ['call_id', 'stream'],
  'tool.completed': ['call_id', 'ok'],
  usage: [],
  'run.error': ['message'],
  'run.completed': ['reason'],
  'task.started': ['task_id'],
  'task.completed': ['task_id', 'reason'],
  'context.compacted': [],
  'notebook.proposal': ['call_id', 'proposal_id', 'notebook', 'cells'],
  'notebook.decision': ['proposal_id', 'decision'],
  'run.message': ['id', 'text']
};

const CELL_TYPES = ['code', 'markdown', 'raw'];

/** Cells as `notebook_propose` and the decision endpoint carry them; throws on another shape. */
export function validateCells(value: unknown, what = 'cells'): IProposedCell[] {
  if (!Array.isArray(value) || !value.length) {
    throw new ShapeError(`${what}: expected a non-empty list of cells`);
  }
  return value.map((cell, i) => {
    const source = isObject(cell) ? sourceText(cell.source) : null;
    if (!isObject(cell) || !CELL_TYPES.includes(cell.cell_type as string) || source === null) {
      throw new ShapeError(`${what}[${i}]: expected {cell_type: code|markdown|raw, source}`);
    }
    return { cell_type: cell.cell_type as IProposedCell['cell_type'], source };
  });
}

function validateMentions(value: unknown): IMention[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter((m): m is Record<string, unknown> => isObject(m) && typeof m.name === 'string')
    .map(m => ({ name: String(m.name), description: String(m.description ?? '') }));
}

/** The instructions files of `run.started.context`, those of another shape dropped. */
export function validateInstructions(value: unknown): IInstructionFile[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter((i): i is Record<string, unknown> => isObject(i) && typeof i.path === 'string')
    .map(i => ({ path: String(i.path), sha256: String(i.sha256 ?? ''), cut: i.cut === true }));
}

/** The fields of some events, checked beyond their presence and normalized. */
function normalize(type: EventType, data: Record<string, unknown>): Record<string, unknown> {
  switch (type) {
    case 'run.started': {
      const context = isObject(data.context) ? data.context : {};
      return {
        ...data,
        mentions: validateMentions(data.mentions),
        context: { ...context, instructions: validateInstructions(context.instructions) }
      };
    }
    case 'notebook.proposal':
      if (typeof data.proposal_id !== 'string' || typeof data.notebook !== 'string') {
        throw new ShapeError('notebook.proposal: proposal_id and notebook must be strings');
      }
      return {
        ...data,
        cells: validateCells(data.cells, 'notebook.proposal: cells'),
        after_cell_id: optionalString(data.after_cell_id),
        replace_cell_id: optionalString(data.replace_cell_id),
        replaced_source: sourceText(data.replaced_source),
        note: optionalString(data.note)
      };
    case 'tool.output':
      if (data.stream !== 'stdout' && data.stream !== 'stderr' && data.stream !== 'display') {
        throw new ShapeError('tool.output: stream must be stdout, stderr or display');
      }
      return {
        ...data,
        text: typeof data.text === 'string' ? data.text : undefined,
        mime: isObject(data.mime) ? data.mime : undefined
      };
    case 'notebook.decision':
      if (data.decision !== 'accepted' && data.decision !== 'rejected') {
        throw new ShapeError('notebook.decision: decision must be accepted or rejected');
      }
      return data;
    default:
      return data;
  }
}

/** Check one SSE frame (`id`, `event`, `data` text) and return the typed event. */
export function validateEvent(id: string | null, type: string, data: string): IRunEvent {
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    throw new ShapeError(`unknown event type ${JSON.stringify(type)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new ShapeError(`${type}: data is not JSON`);
  }
  const idField = type.startsWith('task.') ? 'task_id' : 'run_id';
  if (!isObject(parsed) || typeof parsed[idField] !== 'string') {
    throw new ShapeError(`${type}: data must be an object with ${idField}`);
  }
  for (const field of REQUIRED[type as EventType]) {
    if (!(field in parsed)) {
      throw new ShapeError(`${type}: missing ${field}`);
    }
  }
  const seq = id === null ? NaN : Number(id);
  const checked = normalize(type as EventType, parsed);
  return { seq, type: type as EventType, data: checked as unknown as IEventData };
}
