/**
 * Plain words for what the panel shows a person (pure: no I/O, no DOM): how a run ended, a
 * provider's error with the setting to change, whether the provider answers, a tool's output
 * without the notes meant for the model.
 */
import type { IArtifact, IHealth } from './validate';

/** How a run ended, in the footer: `stop` is the server's word for a finished answer. */
const REASONS: { readonly [reason: string]: string } = {
  stop: 'done',
  budget: 'round budget used up',
  cancelled: 'cancelled',
  error: 'ended with an error',
  interrupted: 'interrupted'
};

/** The footer's word for a run's end reason (an unknown reason is shown as it is). */
export function reasonLabel(reason: string): string {
  return REASONS[reason] ?? reason;
}

/** The setting a provider error's code points at, when one does. */
const SETTINGS: { readonly [code: string]: string } = {
  provider_unreachable: 'c.Resolve.base_url',
  provider_timeout: 'c.Resolve.base_url',
  provider_auth: 'c.Resolve.api_key_env',
  provider_not_found: 'c.Resolve.model'
};

/**
 * A `run.error` as a person reads it: the message without the code, and the setting to change
 * when the code names one and the message does not already.
 */
export function runErrorLine(code: string | undefined, message: string): string {
  const text = message.trim() || (code ?? 'error').replace(/_/g, ' ');
  const setting = code ? SETTINGS[code] : undefined;
  if (!setting || text.includes(setting)) {
    return text;
  }
  return `${text} (check ${setting})`;
}

const CODED = /^([a-z]+(?:_[a-z]+)+): ([\s\S]*)$/;

/**
 * A run's errors as the answer shows them: each `code: message` (as the fold and the magics
 * keep them) in plain words, and once: a retried provider error repeats the same message.
 */
export function plainErrors(errors: readonly string[]): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const coded = CODED.exec(error);
    const line = coded ? runErrorLine(coded[1], coded[2]) : error;
    if (!lines.includes(line)) {
      lines.push(line);
    }
  }
  return lines;
}

/** The empty-run summary without the "Last error: …" the answer already shows above it. */
export function summaryWithoutShownErrors(summary: string, errors: readonly string[]): string {
  let text = summary;
  for (const line of errors) {
    const message = line.replace(/ \(check c\.Resolve\.[a-z_]+\)$/, '');
    text = text.replace(` Last error: ${message}`, '').replace(`Last error: ${message} `, '');
  }
  return text;
}

/**
 * The empty chat's hint, for the provider that will answer: the offline scripted model runs the
 * Python a message fences (it follows a script, not the question); a real model is asked in
 * plain words and picks its tools itself. `provider`: health's provider name (null: unknown).
 */
export function emptyChatHint(provider: string | null): string {
  if (provider === 'scripted') {
    return (
      'The offline scripted model answers from its script, not your question: fence Python ' +
      'in ```python and it runs that in its own scratch kernel.'
    );
  }
  const local =
    provider === 'local' ? ' The local model starts on the first message and can be slow.' : '';
  return (
    'Ask a question in plain words. The agent can run Python in its own scratch kernel, read ' +
    'files and propose notebook cells for you to accept.' +
    local
  );
}

/** Where the model provider stands, from `GET resolve/api/health`. */
export interface IProviderState {
  /** `reachable`, `unreachable`, or `not checked` (the scripted model, an older server). */
  readonly state: 'reachable' | 'unreachable' | 'not checked';
  /** The words shown, e.g. "unreachable: connection refused (change c.Resolve.base_url)". */
  readonly text: string;
}

/** The provider's row in the Status tab. */
export function providerState(health: IHealth): IProviderState {
  if (health.providerName === 'scripted') {
    return { state: 'not checked', text: 'offline scripted model: nothing to reach' };
  }
  if (health.reachable === true) {
    return { state: 'reachable', text: 'reachable' };
  }
  if (health.reachable === false) {
    const why = health.providerError ? `: ${health.providerError}` : '';
    const change = health.providerSetting ? ` (change ${health.providerSetting})` : '';
    return { state: 'unreachable', text: `unreachable${why}${change}` };
  }
  return { state: 'not checked', text: 'not checked' };
}

const SHOWN_NOTE = /\n?\[shown to the person: [^\]\n]*\]\n?/g;

/**
 * A tool's output as the card shows it: the note telling the model what the person saw
 * ("[shown to the person: image/png]") is dropped when the card shows that display itself.
 */
export function toolOutputText(output: string, showsDisplay: boolean): string {
  return showsDisplay ? output.replace(SHOWN_NOTE, '\n').trim() : output;
}

/**
 * Who promoted an artifact and when, as its row shows it: the person's name (the login only
 * from an older server), local time, the media type: "Ada · 01/12/2026, 17:02:11 · image/png".
 */
export function artifactMeta(artifact: IArtifact): string {
  return [artifactBy(artifact), artifactWhen(artifact), artifact.media_type]
    .filter(Boolean)
    .join(' · ');
}

/** Who promoted an artifact, as its row and its detail show it: the name, else the login. */
export function artifactBy(artifact: IArtifact): string {
  return artifact.created_by_name || artifact.created_by || '';
}

/** When an artifact was promoted, in local time ('' when the server did not say). */
export function artifactWhen(artifact: IArtifact): string {
  const at = artifact.created_at;
  const date = typeof at === 'number' ? new Date(at * 1000) : at ? new Date(at) : null;
  return date && !Number.isNaN(date.getTime()) ? date.toLocaleString() : '';
}

/** Where an artifact came from, in words, and the notebook cell to open when it has one. */
export function artifactSource(artifact: IArtifact): {
  readonly text: string;
  readonly notebook: string | null;
  readonly cellId: string | null;
} {
  const s = artifact.source;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
  const notebook = str(s.notebook);
  const cellId = str(s.cell_id);
  const count = typeof s.execution_count === 'number' ? ` Out[${s.execution_count}]` : '';
  switch (s.kind) {
    case 'notebook':
    case 'kernel':
      return {
        text: notebook ? `${notebook}${count}` : (str(s.label) ?? 'a kernel value'),
        notebook,
        cellId
      };
    case 'tool':
      return { text: `a tool call of run ${str(s.run_id) ?? '?'}`, notebook: null, cellId: null };
    case 'scratch':
      return { text: `${str(s.path) ?? 'a file'} (agent workspace)`, notebook: null, cellId: null };
    default:
      return { text: str(s.path) ?? String(s.kind ?? ''), notebook: null, cellId: null };
  }
}
