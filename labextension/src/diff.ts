/**
 * A line diff of a proposed cell against the cell it replaces (pure: no I/O, no DOM). Longest
 * common subsequence over lines; a pair of sources too large for that is shown as all removed
 * then all added.
 */

/** One line of a diff: kept, removed or added. */
export interface IDiffLine {
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

/** Beyond this many line pairs the table would be too big: no alignment is attempted. */
export const MAX_CELLS = 1_000_000;

function lines(source: string): string[] {
  if (!source) {
    return [];
  }
  const split = source.split('\n');
  if (split[split.length - 1] === '') {
    split.pop(); // a final newline ends the last line, it does not start an empty one
  }
  return split;
}

/** The lines of `after` against `before`, in order. */
export function lineDiff(before: string, after: string): IDiffLine[] {
  const a = lines(before);
  const b = lines(after);
  if (a.length * b.length > MAX_CELLS) {
    return [
      ...a.map(text => ({ op: '-' as const, text })),
      ...b.map(text => ({ op: '+' as const, text }))
    ];
  }
  // lcs[i][j]: the longest common subsequence of a[i:] and b[j:]
  const lcs: Uint32Array[] = Array.from(
    { length: a.length + 1 },
    () => new Uint32Array(b.length + 1)
  );
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: IDiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ op: '-', text: a[i++] });
    } else {
      out.push({ op: '+', text: b[j++] });
    }
  }
  while (i < a.length) {
    out.push({ op: '-', text: a[i++] });
  }
  while (j < b.length) {
    out.push({ op: '+', text: b[j++] });
  }
  return out;
}

/** The diff as unified-style text ("- old", "+ new", "  kept"), one line each. */
export function diffText(diff: readonly IDiffLine[]): string {
  return diff.map(line => `${line.op} ${line.text}`).join('\n');
}
