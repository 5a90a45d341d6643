// Small truths (issue 46.6): a proposal naming a cell its notebook lacks is flagged on its
// card; an artifact's detail names who promoted it as its row does.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { plain as Pl, proposal as P, validate as V } from './load.mjs';

const base = { afterCellId: null, replaceCellId: null, replacedSource: null };

describe('missingTarget', () => {
  test('the open notebook decides: a named cell it lacks is missing', () => {
    const ids = ['a', 'b'];
    assert.equal(P.missingTarget({ ...base, afterCellId: 'b' }, ids), null);
    assert.equal(P.missingTarget({ ...base, afterCellId: 'cell-7' }, ids), 'cell-7');
    assert.equal(P.missingTarget({ ...base, replaceCellId: 'x', replacedSource: 'x = 1' }, ids), 'x');
    assert.equal(P.missingTarget({ ...base, replaceCellId: 'a', replacedSource: 'a = 1' }, ids), null);
  });

  test('at the end names no cell', () => {
    assert.equal(P.missingTarget(base, ['a']), null);
    assert.equal(P.missingTarget(base, null), null);
  });

  test('not open: a replacement the server found no cell for is missing', () => {
    assert.equal(P.missingTarget({ ...base, replaceCellId: 'x', replacedSource: null }, null), 'x');
    assert.equal(P.missingTarget({ ...base, replaceCellId: 'x', replacedSource: '' }, null), null);
    assert.equal(P.missingTarget({ ...base, afterCellId: 'x' }, null), null); // unknown: not flagged
  });
});

describe("an artifact's detail", () => {
  const artifact = extra =>
    V.validateArtifact({
      id: 'art-0123456789abcdef01234567',
      media_type: 'text/html',
      title: 'df',
      created_by: '2177f83583fb4e9c8d2e5d566f4a1c88',
      created_at: '2026-12-01T16:30:00.000+00:00',
      source: { kind: 'notebook', notebook: 'a.ipynb', cell_id: 'c-1', output_index: 0 },
      ...extra
    });

  test('"by" is the display name, as in the list; the login only from an older server', () => {
    const named = artifact({ created_by_name: 'Ada Lovelace' });
    assert.equal(Pl.artifactBy(named), 'Ada Lovelace');
    assert.ok(Pl.artifactMeta(named).startsWith(`${Pl.artifactBy(named)} · ${Pl.artifactWhen(named)}`));
    assert.equal(Pl.artifactBy(artifact({})), '2177f83583fb4e9c8d2e5d566f4a1c88');
  });

  test('"when" is local time, not the stored text; nothing when unknown', () => {
    assert.ok(!Pl.artifactWhen(artifact({})).includes('T16:30'));
    assert.equal(Pl.artifactWhen(artifact({ created_at: undefined })), '');
  });
});
