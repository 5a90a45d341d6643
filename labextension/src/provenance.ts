/**
 * Provenance in the panel (pure: no DOM, no JupyterLab): a reproduction's answer and the line
 * an artifact row shows for it, and who wrote a cell (its `metadata.resolve`, issue 49.3).
 */
import { isObject } from './shapes';

/** What differs between an artifact and its reproduction. */
export interface IDifference {
  readonly kind: string;
  /** A unified diff (`kind: "text"`). */
  readonly diff?: string;
  /** The first differing rows (`kind: "table"`). */
  readonly rows?: readonly { row: number; expected: unknown; got: unknown }[];
  readonly note?: string;
}

/** `POST resolve/api/artifacts/{id}/reproduce`'s answer (the parts the panel shows). */
export interface IReproduction {
  readonly reproduced: boolean;
  readonly identical: boolean;
  readonly summary: string;
  readonly steps: number;
  readonly failedSteps: number;
  readonly difference: IDifference | null;
  readonly nondeterminism: readonly string[];
  readonly endedAt: string | null;
}

/** Check a reproduction's answer; null when it is not one. */
export function validateReproduction(body: unknown): IReproduction | null {
  if (!isObject(body) || typeof body.reproduced !== 'boolean') {
    return null;
  }
  const difference = isObject(body.difference) && typeof body.difference.kind === 'string'
    ? (body.difference as unknown as IDifference)
    : null;
  const hints = Array.isArray(body.nondeterminism)
    ? body.nondeterminism.filter((h): h is string => typeof h === 'string')
    : [];
  return {
    reproduced: body.reproduced,
    identical: body.identical === true,
    summary: typeof body.summary === 'string' ? body.summary : '',
    steps: typeof body.steps === 'number' ? body.steps : 0,
    failedSteps: Array.isArray(body.failed_steps) ? body.failed_steps.length : 0,
    difference,
    nondeterminism: hints,
    endedAt: typeof body.ended_at === 'string' ? body.ended_at : null
  };
}

/** The one line an artifact row shows for its reproduction. */
export function reproductionLine(result: IReproduction): string {
  const calls = `${result.steps} call${result.steps === 1 ? '' : 's'} run again`;
  if (result.reproduced) {
    return result.identical
      ? `Reproduced: ${calls}, the same bytes.`
      : `Reproduced: ${calls}, the same image (its metadata differs).`;
  }
  const what = result.difference?.kind ?? 'result';
  const failed = result.failedSteps ? `; ${result.failedSteps} call(s) now end otherwise` : '';
  const hints = result.nondeterminism.length
    ? `; the code may vary by itself (${result.nondeterminism.join(', ')})`
    : '';
  return `Not reproduced: ${calls}, the ${what} differs${failed}${hints}.`;
}

const MAX_DETAIL_LINES = 40;

/** What differs, as text to show under the line (a diff, the first rows), or null. */
export function reproductionDetail(result: IReproduction): string | null {
  const difference = result.difference;
  if (result.reproduced || !difference) {
    return null;
  }
  if (difference.diff) {
    const lines = difference.diff.split('\n');
    const shown = lines.slice(0, MAX_DETAIL_LINES);
    if (lines.length > shown.length) {
      shown.push(`… ${lines.length - shown.length} more line(s)`);
    }
    return shown.join('\n');
  }
  if (difference.rows?.length) {
    return difference.rows
      .map(
        r =>
          `row ${r.row}: expected ${JSON.stringify(r.expected)}, got ${JSON.stringify(r.got)}`
      )
      .join('\n');
  }
  return difference.note ?? null;
}

/** `metadata.resolve` of a cell the agent wrote and a person accepted (see the docs). */
export interface ICellAuthorship {
  readonly run_id: string;
  readonly call_id: string;
  readonly proposal_id: string;
  readonly model?: string;
  readonly soul?: string;
  readonly accepted_by?: string;
  readonly accepted_by_name?: string;
  readonly accepted_at?: string;
  readonly source_sha256?: string;
  readonly edited_on_accept?: boolean;
}

/** A cell's authorship from its metadata, or null when the agent did not write it. */
export function authorshipOf(metadata: unknown): ICellAuthorship | null {
  const resolve = isObject(metadata) ? metadata.resolve : undefined;
  if (!isObject(resolve) || typeof resolve.run_id !== 'string' || !resolve.run_id) {
    return null;
  }
  return resolve as unknown as ICellAuthorship;
}

/**
 * Whether the cell was edited since it was accepted: its source's sha256 (hex) against the
 * accepted one; null when unknown (no digest kept, or none computed).
 */
export function editedSince(authorship: ICellAuthorship, sourceSha256: string | null): boolean | null {
  if (!authorship.source_sha256 || sourceSha256 === null) {
    return null;
  }
  return authorship.source_sha256 !== sourceSha256;
}

/** The marker's tooltip: who wrote the cell, who accepted it, and whether it was edited. */
export function authorshipTitle(authorship: ICellAuthorship, edited: boolean | null): string {
  const model = authorship.model ? ` (${authorship.model})` : '';
  const lines = [`Written by the agent${model} in run ${authorship.run_id}`];
  const who = authorship.accepted_by_name || authorship.accepted_by;
  if (who || authorship.accepted_at) {
    const when = authorship.accepted_at ? ` on ${authorship.accepted_at.slice(0, 16).replace('T', ' ')} UTC` : '';
    lines.push(`accepted by ${who || 'a person'}${when}`);
  }
  if (authorship.edited_on_accept) {
    lines.push('edited before it was accepted');
  }
  lines.push(
    edited === true
      ? 'edited since'
      : edited === false
        ? 'not edited since'
        : 'edits since unknown'
  );
  return lines.join('; ');
}

/** The name a downloaded crate gets. */
export function crateFilename(artifactId: string): string {
  return `${artifactId}.crate.zip`;
}
