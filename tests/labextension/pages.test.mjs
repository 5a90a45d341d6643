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

// The Runs and Sessions tabs' listing (PagedListing): a page at a time, as the list is scrolled.
import { listings as L } from './load.mjs';

function listingServer(rows, size, { indexing = false } = {}) {
  const server = pagedServer(rows, size);
  const fetchPage = async before => ({ ...(await server.fetchPage(before)), indexing });
  return { fetchPage, asked: server.asked };
}

test('a listing loads its first page, then one more page each time, until the last', async () => {
  const server = listingServer(Array.from({ length: 7 }, (_, i) => run(i)), 3);
  const seen = [];
  const listing = new P.PagedListing(server.fetchPage, r => r.run_id, s => seen.push(s));
  await listing.reset();
  assert.deepEqual(listing.state.rows.map(r => r.run_id), ['run-0', 'run-1', 'run-2']);
  assert.equal(listing.state.more, true);
  assert.ok(seen.some(s => s.loading), 'it says it is loading while the page is asked for');
  await listing.more();
  await listing.more();
  assert.equal(listing.state.rows.length, 7);
  assert.equal(listing.state.more, false);
  await listing.more(); // at the end: nothing more is asked
  assert.deepEqual(server.asked, [null, 'after-2', 'after-5']);
});

test('one page is asked for at a time; a row seen on an earlier page is not shown twice', async () => {
  let release;
  const gate = new Promise(r => (release = r));
  const asked = [];
  const pages = {
    null: { rows: [run(0), run(1)], next: 'c1', indexing: false },
    c1: { rows: [run(1), run(2)], next: null, indexing: false }
  };
  const listing = new P.PagedListing(async before => {
    asked.push(before);
    await gate;
    return pages[before];
  }, r => r.run_id);
  const first = listing.reset();
  const again = listing.more(); // the sentinel fires again while the first page loads
  release();
  await Promise.all([first, again]);
  assert.deepEqual(asked, [null]);
  await listing.more();
  assert.deepEqual(listing.state.rows.map(r => r.run_id), ['run-0', 'run-1', 'run-2']);
});

test('a page asked for before a reset is dropped; a failed page keeps the rows and can be retried', async () => {
  let fail = false;
  let slow = null;
  const listing = new P.PagedListing(async before => {
    if (slow) await slow;
    if (fail) throw new Error('503 Service Unavailable');
    return { rows: [run(before ? 1 : 0)], next: before ? null : 'c1', indexing: true };
  }, r => r.run_id);
  await listing.reset();
  assert.equal(listing.state.indexing, true, 'the server said older runs are still being indexed');
  let release;
  slow = new Promise(r => (release = r));
  const stale = listing.more();
  const fresh = listing.reset();
  release();
  await Promise.all([stale, fresh]);
  assert.deepEqual(listing.state.rows.map(r => r.run_id), ['run-0'], 'the stale second page is dropped');
  slow = null;
  fail = true;
  await listing.more();
  assert.equal(listing.state.error, '503 Service Unavailable');
  assert.deepEqual(listing.state.rows.map(r => r.run_id), ['run-0']);
  assert.equal(listing.state.more, true);
  fail = false;
  await listing.more();
  assert.deepEqual(listing.state.rows.map(r => r.run_id), ['run-0', 'run-1']);
  assert.equal(listing.state.error, null);
});

test('a listing whose server repeats a cursor stops', async () => {
  let i = 0;
  const listing = new P.PagedListing(async () => ({ rows: [run(i++)], next: 'same', indexing: false }), r => r.run_id);
  await listing.reset();
  await listing.more();
  assert.equal(listing.state.more, false);
  assert.equal(listing.state.rows.length, 2);
});

test('validateSessions: rows with ids, titled as this browser named them, else by their first prompt', () => {
  const body = {
    sessions: [
      { session_id: 's1', runs: 3, started_at: 10, last_at: 20, prompt: 'first question', peer: null },
      { session_id: 's2', runs: 1, started_at: 5, last_at: 5, prompt: null, peer: 'alpha' },
      { session_id: '', runs: 1 },
      'junk'
    ],
    next: 'c',
    indexing: true
  };
  const stored = { s1: { id: 's1', title: 'Mine', startedAt: 0, prompts: {} } };
  assert.deepEqual(L.validateSessions(body, stored), [
    { id: 's1', title: 'Mine', runs: 3, startedAt: 10000, lastAt: 20000, peer: null },
    { id: 's2', title: 's2', runs: 1, startedAt: 5000, lastAt: 5000, peer: 'alpha' }
  ]);
  assert.equal(L.validateSessions(body)[0].title, 'first question');
  assert.equal(L.validateIndexing(body), true);
  assert.equal(L.validateIndexing({ indexing: 'yes' }), false);
  assert.throws(() => L.validateSessions({ runs: [] }), /sessions/);
});
