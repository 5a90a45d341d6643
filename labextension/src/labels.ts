/** The words the panel shows for a run: its footer, compactions, proposals, an empty answer. */
import { ICompaction, IProposal, IRunView, isFinished } from './run';

/** `$0.0042`, as %resolve writes a cost. */
export function formatCost(usd: number): string {
  return `$${usd.toFixed(4)}`;
}

/**
 * The footer's tokens and cost, as %resolve shows them:
 * "1,234 tokens (900 cached, 50 written to cache) · $0.0042" (no cost when no price is known;
 * "of $0.50" when the run has a cost budget; "≈ 1,234 tokens" when the gateway counted them).
 */
export function usageLine(run: IRunView): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const cache = [
    [run.cachedTokens ?? 0, 'cached'],
    [run.cacheWriteTokens ?? 0, 'written to cache']
  ]
    .filter(([count]) => count)
    .map(([count, what]) => `${n(count as number)} ${what}`);
  const about = run.estimated ? '≈ ' : '';
  let line = `${about}${n(run.promptTokens + run.completionTokens)} tokens`;
  if (cache.length) {
    line += ` (${cache.join(', ')})`;
  }
  if (run.cost !== null && run.cost !== undefined) {
    line += ` · ${formatCost(run.cost)}`;
    if (run.costBudget) {
      line += ` of $${run.costBudget.toFixed(2)}`;
    }
  }
  return line;
}

/**
 * What the model is doing while it writes a tool call, as %resolve says it too:
 * "writing a python call… ≈ 40 tokens" (no count before its arguments start); null when it is
 * writing none.
 */
export function writingLine(run: IRunView): string | null {
  if (!run.writing || isFinished(run)) {
    return null;
  }
  const { name, tokens } = run.writing;
  const count = tokens ? ` ≈ ${tokens.toLocaleString('en-US')} token${tokens === 1 ? '' : 's'}` : '';
  return `writing a ${name} call…${count}`;
}

/**
 * The quiet line a compaction shows, e.g.
 * "context compacted: 131,072 → 60,210 tokens · elided 3 old tool outputs to fit 100000 tokens".
 */
export function compactionLine(c: ICompaction): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const tokens =
    c.beforeTokens !== null && c.afterTokens !== null
      ? `${n(c.beforeTokens)} → ${n(c.afterTokens)} tokens · `
      : '';
  return `context compacted: ${tokens}${c.note}`;
}

/** The words a decided proposal shows, e.g. "accepted (edited, ran)" or "rejected: too slow". */
export function decisionLabel(p: IProposal): string {
  if (p.status === 'waiting') {
    return 'waiting for your review';
  }
  if (p.status === 'closed') {
    return 'closed: the run ended before a decision';
  }
  const how = [p.edited ? 'edited' : '', p.ran ? 'ran' : ''].filter(Boolean);
  const by = p.by === 'timeout' ? ' (timed out)' : '';
  const reason = p.reason ? `: ${p.reason}` : '';
  return `${p.status}${how.length ? ` (${how.join(', ')})` : ''}${by}${reason}`;
}

/** The empty-run summary shown when the run ended with no answer text (null otherwise). */
export function emptySummary(run: IRunView): string | null {
  if (!isFinished(run) || run.parts.some(p => p.kind === 'text' && p.text.trim())) {
    return null;
  }
  return run.summary || `No answer (${run.reason}).`;
}

/** The text of the answer (what goes back as the assistant message in history). */
export function answerText(run: IRunView): string {
  return run.parts
    .filter((p): p is { kind: 'text'; text: string } => p.kind === 'text')
    .map(p => p.text)
    .join('');
}
