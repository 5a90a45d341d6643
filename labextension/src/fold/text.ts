/** How `text.delta` and `reasoning.delta` fold into a run's view: appended to the last part. */
import type { Fold, IRunView } from '../run';
import type { EventType } from '../events';

function appendText(run: IRunView, kind: 'text' | 'reasoning', text: string): void {
  const last = run.parts[run.parts.length - 1];
  if (last && last.kind === kind) {
    last.text += text;
  } else {
    run.parts.push({ kind, text });
  }
}

/** The text family: the answer and the model's reasoning, piece by piece. */
export const TEXT_FOLDS: { readonly [T in Extract<EventType, `${string}.delta`>]: Fold } = {
  'text.delta': (run, d) => appendText(run, 'text', String(d.text ?? '')),
  'reasoning.delta': (run, d) => appendText(run, 'reasoning', String(d.text ?? ''))
};
