// Issue 49.3 and 49.4, the panel's pure parts: a reproduction's verdict on an artifact row, who
// wrote a cell (its metadata.resolve) and whether it was edited since, and the accepted cells
// carrying the server's authorship.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { proposal as P, validate as V } from './load.mjs';

const require = createRequire(import.meta.url);
const R = require('../../labextension/build/pure/provenance.js');

describe('a reproduction on the row', () => {
  test('reproduced says so in one line, with nothing under it', () => {
    const r = R.validateReproduction({ reproduced: true, identical: true, steps: 2, failed_steps: [], summary: 's' });
    assert.equal(R.reproductionLine(r), 'Reproduced: 2 calls run again, the same bytes.');
    assert.equal(R.reproductionDetail(r), null);
    const image = R.validateReproduction({ reproduced: true, identical: false, steps: 1 });
    assert.match(R.reproductionLine(image), /same image/);
  });

  test('not reproduced says what differs, with the diff or the first rows under it', () => {
    const text = R.validateReproduction({
      reproduced: false, steps: 2, failed_steps: [{ call_id: 'c' }],
      difference: { kind: 'text', diff: '--- artifact\n+++ reproduced\n+4,16' },
      nondeterminism: ['the clock (time, datetime.now, today)']
    });
    const line = R.reproductionLine(text);
    assert.match(line, /^Not reproduced: 2 calls run again, the text differs; 1 call\(s\) now end otherwise/);
    assert.match(line, /the code may vary by itself \(the clock/);
    assert.equal(R.reproductionDetail(text), '--- artifact\n+++ reproduced\n+4,16');
    const table = R.validateReproduction({
      reproduced: false, steps: 1, difference: { kind: 'table', rows: [{ row: 3, expected: ['3', '9'], got: ['3', '10'] }] }
    });
    assert.equal(R.reproductionDetail(table), 'row 3: expected ["3","9"], got ["3","10"]');
    const long = R.validateReproduction({
      reproduced: false, steps: 1, difference: { kind: 'text', diff: Array.from({ length: 90 }, (_, i) => `+${i}`).join('\n') }
    });
    assert.match(R.reproductionDetail(long), /… 50 more line\(s\)$/);
  });

  test('what is not a reproduction is refused', () => {
    assert.equal(R.validateReproduction({ error: { code: 'x' } }), null);
    assert.equal(R.validateReproduction(null), null);
    assert.equal(R.crateFilename('art-1'), 'art-1.crate.zip');
  });
});

describe('who wrote a cell', () => {
  const meta = {
    resolve: {
      authorship: 1, run_id: 'run-1', call_id: 'call_1', proposal_id: 'proposal-1', model: 'gpt-4.1',
      accepted_by: 'ada', accepted_by_name: 'Ada Lovelace', accepted_at: '2026-12-04T23:20:01.512+00:00',
      source_sha256: 'a'.repeat(64)
    }
  };

  test('is read from metadata.resolve; an edit flips edited', () => {
    const a = R.authorshipOf(meta);
    assert.equal(a.model, 'gpt-4.1');
    assert.equal(R.editedSince(a, 'a'.repeat(64)), false);
    assert.equal(R.editedSince(a, 'b'.repeat(64)), true);
    assert.equal(R.editedSince(a, null), null);
    const title = R.authorshipTitle(a, true);
    assert.equal(title, 'Written by the agent (gpt-4.1) in run run-1; accepted by Ada Lovelace on 2026-12-04 23:20 UTC; edited since');
    assert.match(R.authorshipTitle(a, false), /not edited since$/);
    const older = R.authorshipOf({ resolve: { run_id: 'r', call_id: 'c', proposal_id: 'p' } });
    assert.equal(R.editedSince(older, 'a'.repeat(64)), null);
    assert.match(R.authorshipTitle(older, null), /edits since unknown$/);
  });

  test('a cell the agent did not write has none', () => {
    assert.equal(R.authorshipOf({ resolve: { artifact_id: 'art-x' } }), null);
    assert.equal(R.authorshipOf({}), null);
    assert.equal(R.authorshipOf(null), null);
  });

  test('accepted cells carry the server authorship, each its own', () => {
    const answer = V.validateProposalAnswer({
      proposal_id: 'p', decision: 'accepted', edited: false, ran: false, outputs: null, execution_counts: null,
      authorship: [{ run_id: 'run-1', source_sha256: '1' }, { run_id: 'run-1', source_sha256: '2' }, 'junk']
    });
    assert.equal(answer.authorship.length, 2);
    const fallback = { run_id: 'run-1', call_id: 'call_1', proposal_id: 'p' };
    const cells = P.acceptedCells(
      [{ cell_type: 'markdown', source: '# A' }, { cell_type: 'code', source: 'x' }], fallback, null, null, answer.authorship
    );
    assert.deepEqual(cells.map(c => c.metadata.resolve.source_sha256), ['1', '2']);
    assert.deepEqual(P.acceptedCells([{ cell_type: 'code', source: 'x' }], fallback)[0].metadata.resolve, fallback);
    const rejected = V.validateProposalAnswer({ proposal_id: 'p', decision: 'rejected', edited: false, ran: false });
    assert.equal(rejected.authorship, null);
  });
});
