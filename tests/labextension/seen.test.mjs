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
