/**
 * Where accepted cells go in the person's notebook and what they hold (pure: no I/O, no DOM);
 * notebook.ts applies the result to the open notebook's model.
 */
import { IDiffLine, lineDiff } from './diff';
import { IProposal } from './run';
import { IProposedCell } from './events';
import { NbOutput } from './validate';

/** Where a proposal's cells go among the notebook's cells. */
export interface IPlacement {
  /** Index of the first inserted cell. */
  readonly index: number;
  /** True when the cell at `index` is replaced (deleted, the new cells put in its place). */
  readonly replace: boolean;
  /** The cell id the proposal named that the notebook no longer has (the cells go at the end). */
  readonly missing: string | null;
}

/** After `after_cell_id`, in place of `replace_cell_id`, or at the end (either not found). */
export function placement(
  cellIds: readonly string[],
  proposal: Pick<IProposal, 'afterCellId' | 'replaceCellId'>
): IPlacement {
  if (proposal.replaceCellId) {
    const at = cellIds.indexOf(proposal.replaceCellId);
    if (at >= 0) {
      return { index: at, replace: true, missing: null };
    }
    return { index: cellIds.length, replace: false, missing: proposal.replaceCellId };
  }
  if (proposal.afterCellId) {
    const at = cellIds.indexOf(proposal.afterCellId);
    if (at >= 0) {
      return { index: at + 1, replace: false, missing: null };
    }
    return { index: cellIds.length, replace: false, missing: proposal.afterCellId };
  }
  return { index: cellIds.length, replace: false, missing: null };
}

/**
 * The cell a proposal names (to replace, or to go after) that its notebook does not have, else
 * null. `cellIds`: the open notebook's cells (null: not open); then a replacement whose cell
 * the server could not read when it was proposed (no `replaced_source`) names a missing cell.
 */
export function missingTarget(
  proposal: Pick<IProposal, 'afterCellId' | 'replaceCellId' | 'replacedSource'>,
  cellIds: readonly string[] | null
): string | null {
  const target = proposal.replaceCellId ?? proposal.afterCellId;
  if (!target) {
    return null;
  }
  if (cellIds) {
    return cellIds.includes(target) ? null : target;
  }
  return proposal.replaceCellId && proposal.replacedSource === null ? target : null;
}

/** `metadata.resolve` of an accepted cell (DESIGN 9.2). */
export interface IResolveCellMetadata {
  readonly run_id: string;
  readonly call_id: string;
  readonly proposal_id: string;
}

/** An nbformat cell as the notebook model inserts it. */
export interface INewCell {
  readonly cell_type: IProposedCell['cell_type'];
  readonly source: string;
  readonly metadata: { readonly resolve: IResolveCellMetadata | Record<string, unknown> };
  readonly outputs?: NbOutput[];
  readonly execution_count?: number | null;
}

/**
 * The cells to insert: each with `metadata.resolve` (the server's `authorship` of it when the
 * answer had one, issue 49.3, else `resolve`); code cells with the outputs and execution count
 * the server returned when it ran them (by position among the accepted cells).
 */
export function acceptedCells(
  cells: readonly IProposedCell[],
  resolve: IResolveCellMetadata,
  outputs: readonly NbOutput[][] | null = null,
  counts: readonly (number | null)[] | null = null,
  authorship: readonly Record<string, unknown>[] | null = null
): INewCell[] {
  return cells.map((cell, i) => {
    const base = {
      cell_type: cell.cell_type,
      source: cell.source,
      metadata: { resolve: { ...(authorship?.[i] ?? resolve) } }
    };
    if (cell.cell_type !== 'code') {
      return base;
    }
    return { ...base, outputs: [...(outputs?.[i] ?? [])], execution_count: counts?.[i] ?? null };
  });
}

/**
 * The source each proposed cell is shown against: the replaced cell's (the live notebook's when
 * it is open, else the one the server read) for the first cell of a replacement; null (a new
 * cell) otherwise.
 */
export function diffBases(proposal: IProposal, liveSource: string | null): (string | null)[] {
  const replaced = proposal.replaceCellId ? (liveSource ?? proposal.replacedSource) : null;
  return proposal.cells.map((_, i) => (i === 0 ? replaced : null));
}

/**
 * The diffs a card shows: each proposed cell's source (`sources`, the person's drafts) against
 * its base (see {@link diffBases}; `shown` is the replaced cell as the card shows it now), so
 * a new `shown` gives a new diff for the first cell.
 */
export function cardDiffs(
  proposal: IProposal,
  shown: string | null,
  sources: readonly string[]
): IDiffLine[][] {
  const bases = diffBases(proposal, shown);
  return sources.map((source, i) => lineDiff(bases[i] ?? '', source));
}

/**
 * A check to call on every change of the open notebook: it calls `changed` only when `read`
 * (the replaced cell's source, null when not open) answers otherwise than the last time, so
 * typing in another cell does not re-render the card.
 */
export function sourceFollower(
  read: () => string | null,
  changed: () => void
): () => void {
  let last = read();
  return () => {
    const now = read();
    if (now !== last) {
      last = now;
      changed();
    }
  };
}

/** What an Accept of a replacement tells the server the person saw: `seen` (issue 40.2). */
export interface ISeenTarget {
  readonly cell_id: string;
  /** sha256 (hex) of the UTF-8 source the card showed the proposal against. */
  readonly sha256: string;
  /**
   * sha256 of the source the proposal carried (what the file held then), sent from a page
   * whose notebook is its own (no collaboration): the server then takes the Accept while the
   * file still reads so, the difference being the person's own unsaved edit.
   */
  readonly base_sha256?: string;
}

async function sha256Hex(subtle: SubtleCrypto, text: string): Promise<string> {
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map(b => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The `seen` of an Accept: the replaced cell and the digest of `shown`, the source its diff
 * showed (its first diff base), so the server refuses (409 stale_target) if the cell changed
 * since; with `withBase` (the page's own notebook) also the base the proposal carried. Null
 * for an insertion, or where the page has no Web Crypto (plain HTTP off localhost): the server
 * then accepts as before.
 */
export async function seenTarget(
  proposal: IProposal,
  shown: string | null,
  withBase = false
): Promise<ISeenTarget | null> {
  const subtle = globalThis.crypto?.subtle;
  if (!proposal.replaceCellId || shown === null || shown === undefined || !subtle) {
    return null;
  }
  const seen = { cell_id: proposal.replaceCellId, sha256: await sha256Hex(subtle, shown) };
  const base = proposal.replacedSource;
  if (!withBase || typeof base !== 'string') {
    return seen;
  }
  return { ...seen, base_sha256: await sha256Hex(subtle, base) };
}

/** What a 409 `stale_target` said the replaced cell is now (`current`; source null: gone). */
export interface IStaleTarget {
  readonly cellId: string;
  readonly source: string | null;
}

/** The `current` of a 409 `stale_target` answer's body, or null when it has none. */
export function staleTarget(body: unknown): IStaleTarget | null {
  const current =
    body && typeof body === 'object' ? (body as { current?: unknown }).current : undefined;
  if (!current || typeof current !== 'object') {
    return null;
  }
  const { cell_id, source } = current as { cell_id?: unknown; source?: unknown };
  if (typeof cell_id !== 'string' || !cell_id) {
    return null;
  }
  return { cellId: cell_id, source: typeof source === 'string' ? source : null };
}

/** What a 409 said the replaced cell reads now, and what the open notebook held then. */
export interface IRefusal {
  readonly source: string | null;
  readonly live: string | null;
}

/**
 * The source a replacement's card shows its diff against: the open notebook's cell (`live`),
 * unless a 409 said the cell now reads otherwise (`stale`): under real-time collaboration
 * (`shared`) or with the notebook not open here, its source wins until the open notebook's cell
 * changes again. A page's own notebook (no collaboration) is always what the card shows: an
 * Accept replaces the cell there, so the diff is against it (see {@link diskChange}).
 */
export function targetSource(
  live: string | null,
  stale: IRefusal | null,
  shared: boolean | null = true
): string | null {
  if (live !== null && shared === false) {
    return live;
  }
  if (stale && stale.source !== null && stale.live === live) {
    return stale.source;
  }
  return live;
}

/**
 * The cell as the saved file holds it, when a 409 said it reads otherwise than this page's own
 * notebook (no collaboration, open here): someone saved the file since the proposal. The card
 * says so and an Accept is refused again until the person reloads the notebook from disk (the
 * page then holds the file's cell) or saves theirs over it. Null otherwise.
 */
export function diskChange(
  live: string | null,
  stale: IRefusal | null,
  shared: boolean | null
): string | null {
  if (shared !== false || live === null || !stale || stale.source === null) {
    return null;
  }
  return stale.source !== live ? stale.source : null;
}
