// Issue 40.2: an Accept of a replacement says which source the person saw, as the server
// checks it (sha256 of the UTF-8 source, hex), so an edit made since is not deleted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { proposal as P } from './load.mjs';

const REPLACE = {
  replaceCellId: 'cell-b',
  replacedSource: 'x = 1  # as the server read it',
  cells: [{ cell_type: 'code', source: 'x = 2' }]
};
const sha256 = text => createHash('sha256').update(text, 'utf8').digest('hex');

describe('the seen target of an Accept', () => {
  test('a replacement names the cell and the digest of the source its diff shows', async () => {
    assert.deepEqual(await P.seenTarget(REPLACE, P.diffBases(REPLACE, null)[0]), {
      cell_id: 'cell-b',
      sha256: sha256(REPLACE.replacedSource)
    });
    // the open notebook's cell, typing included and not ASCII, is what the card shows
    assert.deepEqual(await P.seenTarget(REPLACE, P.diffBases(REPLACE, 'x = 1  # édité')[0]), {
      cell_id: 'cell-b',
      sha256: sha256('x = 1  # édité')
    });
  });

  test('an insertion, or a replaced cell whose source is unknown, sends none', async () => {
    assert.equal(await P.seenTarget({ ...REPLACE, replaceCellId: null }, 'x = 1'), null);
    assert.equal(await P.seenTarget(REPLACE, null), null);
  });
});

describe('a refused Accept (409 stale_target)', () => {
  test("the answer's current cell is read; another shape is none", () => {
    const body = {
      error: { code: 'stale_target', message: 'changed' },
      current: { cell_id: 'cell-b', source: 'x = 1 + 1', sha256: sha256('x = 1 + 1') }
    };
    assert.deepEqual(P.staleTarget(body), { cellId: 'cell-b', source: 'x = 1 + 1' });
    assert.deepEqual(P.staleTarget({ current: { cell_id: 'cell-b', source: null } }), { cellId: 'cell-b', source: null });
    for (const bad of [null, 'x', {}, { current: 'x' }, { current: { source: 'y' } }]) {
      assert.equal(P.staleTarget(bad), null);
    }
  });

  test("the card shows the server's source until the open notebook's cell changes again", () => {
    const stale = { source: 'x = 1 + 1', live: 'x = 1' };
    // without collaboration this page still holds the old cell: the server's source is shown
    assert.equal(P.targetSource('x = 1', stale), 'x = 1 + 1');
    assert.equal(P.diffBases(REPLACE, P.targetSource('x = 1', stale))[0], 'x = 1 + 1');
    // the notebook's cell changed since: it is followed again
    assert.equal(P.targetSource('x = 3', stale), 'x = 3');
    // not open in this page (null then and now): the server's source
    assert.equal(P.targetSource(null, { source: 'y', live: null }), 'y');
    // the cell is gone, or no refusal: the open notebook's (else the saved one, by diffBases)
    assert.equal(P.targetSource('x = 1', { source: null, live: 'x = 1' }), 'x = 1');
    assert.equal(P.targetSource(null, null), null);
  });
});

describe("the card's diff follows the replaced cell while it waits", () => {
  const text = diffs => diffs.map(d => d.map(l => `${l.op}${l.text}`));

  test('a new source of the cell gives a new diff, and the Accept says that source was seen', async () => {
    const proposal = { ...REPLACE, cells: [...REPLACE.cells, { cell_type: 'markdown', source: '# new' }] };
    const sources = proposal.cells.map(c => c.source);
    assert.deepEqual(text(P.cardDiffs(proposal, 'x = 1', sources)), [['-x = 1', '+x = 2'], ['+# new']]);
    // another person (or the person) edits the cell: the same card, recomputed
    const edited = 'x = 1\ny = x + 1';
    assert.deepEqual(text(P.cardDiffs(proposal, edited, sources)), [['-x = 1', '-y = x + 1', '+x = 2'], ['+# new']]);
    const shown = P.diffBases(proposal, edited)[0];
    assert.deepEqual(await P.seenTarget(proposal, shown), { cell_id: 'cell-b', sha256: sha256(edited) });
    // the person's drafts are diffed too; not open in this page: the source the server read
    assert.deepEqual(text(P.cardDiffs(proposal, null, ['x = 1  # as the server read it\nz = 0', '# new'])), [
      [' x = 1  # as the server read it', '+z = 0'],
      ['+# new']
    ]);
    // an insertion has nothing to follow: all new
    assert.deepEqual(text(P.cardDiffs({ ...proposal, replaceCellId: null }, edited, sources)), [['+x = 2'], ['+# new']]);
  });

  test('only a change of that cell re-renders the card', () => {
    let source = 'x = 1';
    let renders = 0;
    const check = P.sourceFollower(() => source, () => renders++);
    check(); // another cell changed
    assert.equal(renders, 0);
    source = 'x = 12';
    check();
    check();
    assert.equal(renders, 1);
    source = null; // the notebook closed
    check();
    assert.equal(renders, 2);
  });
});

describe("without collaboration the page's own notebook is what the card shows (issue 40, nothing lost)", () => {
  test('an Accept from its own notebook sends the base the proposal carried', async () => {
    const edited = 'x = 1  # my unsaved edit';
    assert.deepEqual(await P.seenTarget(REPLACE, edited, true), {
      cell_id: 'cell-b',
      sha256: sha256(edited),
      base_sha256: sha256(REPLACE.replacedSource)
    });
    // shared (or an event without the source): no base, the check of before
    assert.equal((await P.seenTarget(REPLACE, edited, false)).base_sha256, undefined);
    assert.equal((await P.seenTarget({ ...REPLACE, replacedSource: null }, edited, true)).base_sha256, undefined);
  });

  test("after a 409 the diff stays against the page's cell, and the file's other version is told", () => {
    const stale = { source: 'x = 1 + 1', live: 'x = 1  # mine' };
    // never the server's source while this page holds another: that is what an Accept replaces
    assert.equal(P.targetSource('x = 1  # mine', stale, false), 'x = 1  # mine');
    assert.equal(P.diskChange('x = 1  # mine', stale, false), 'x = 1 + 1');
    // reloaded from disk: the page holds the file's cell, nothing more to tell
    assert.equal(P.targetSource('x = 1 + 1', stale, false), 'x = 1 + 1');
    assert.equal(P.diskChange('x = 1 + 1', stale, false), null);
    // shared, not open here, no refusal, or the cell gone: nothing about the file
    assert.equal(P.diskChange('x = 1  # mine', stale, true), null);
    assert.equal(P.diskChange(null, stale, null), null);
    assert.equal(P.diskChange('x = 1', null, false), null);
    assert.equal(P.diskChange('x = 1', { source: null, live: 'x = 1' }, false), null);
    // shared: the server's source until the cell changes again, as before
    assert.equal(P.targetSource('x = 1  # mine', stale, true), 'x = 1 + 1');
  });
});
