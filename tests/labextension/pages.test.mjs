// Paged listings (labextension/src/pages.ts): `GET resolve/api/runs` answers newest first in
// pages; a session's turns need every page, the runs listing its first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pages as P, validate as V } from './load.mjs';

/** A server holding `rows`, `size` a page, cursors as the index hands them out. */
function pagedServer(rows, size) {
  const asked = [];
  const fetchPage = async before => {
    asked.push(before);
    const start = before === null ? 0 : Number(before.slice('after-'.length)) + 1;
    const page = rows.slice(start, start + size);
    const more = start + size < rows.length;
    const body = { runs: page, next: more ? `after-${start + size - 1}` : null, indexing: false };
    return { rows: V.validateRuns(body), next: V.validateNext(body) };
  };
  return { fetchPage, asked };
}

const run = i => ({ run_id: `run-${i}`, session_id: 's1', started_at: 1000 - i });

test('every page is read, in order, until the one with no next', async () => {
  const rows = Array.from({ length: 7 }, (_, i) => run(i));
  const server = pagedServer(rows, 3);
  const read = await P.readPages(server.fetchPage);
  assert.deepEqual(read.map(r => r.run_id), rows.map(r => r.run_id));
  assert.deepEqual(server.asked, [null, 'after-2', 'after-5']);
});

test('a listing stops after the pages it asked for', async () => {
  const server = pagedServer(Array.from({ length: 7 }, (_, i) => run(i)), 3);
  const read = await P.readPages(server.fetchPage, 1);
  assert.deepEqual(read.map(r => r.run_id), ['run-0', 'run-1', 'run-2']);
  assert.deepEqual(server.asked, [null]);
});

test('a server without paging answers one page; one repeating its cursor is not followed round', async () => {
  const flat = await P.readPages(async () => ({ rows: V.validateRuns({ runs: [run(1)] }), next: V.validateNext({ runs: [] }) }));
  assert.deepEqual(flat.map(r => r.run_id), ['run-1']);
  let calls = 0;
  const looping = await P.readPages(async () => ({ rows: [run(++calls)], next: 'same' }));
  assert.equal(looping.length, 2, 'the first page, and the one the cursor named, then it stops');
});

test('validateNext: a cursor string, else null', () => {
  assert.equal(V.validateNext({ runs: [], next: 'abc' }), 'abc');
  assert.equal(V.validateNext({ runs: [], next: null }), null);
  assert.equal(V.validateNext({ runs: [], next: '' }), null);
  assert.equal(V.validateNext({ runs: [] }), null);
  assert.equal(V.validateNext(null), null);
});
