// Issue 40.4, the panel's pure part: which running runs of the session shown a page attaches to
// (those it does not show), and the pace of asking (every interval, backing off after failures).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { run as R, sessions as S, watch as W } from './load.mjs';

const row = (run_id, status, extra = {}) => ({
  run_id,
  session_id: 's1',
  status,
  started_at: 10,
  ended_at: status === 'running' ? null : 11,
  task_id: null,
  ...extra
});

function shown(id, steps = []) {
  const view = R.emptyRun(0, steps.length > 0);
  view.runId = id;
  view.steps = steps.map(runId => ({ runId, soul: 'planner', done: false }));
  return view;
}

describe('runs started elsewhere', () => {
  test('only the live runs no turn shows', () => {
    const items = S.sessionItems([row('r1', 'completed'), row('r2', 'running'), row('r3', 'running')]);
    assert.deepEqual(W.unseenLive(items, [shown('r1'), shown('r2')]).map(i => i.id), ['r3']);
    assert.deepEqual(W.unseenLive(items, [shown('r1'), shown('r2'), shown('r3')]), []);
  });

  test('a live task is known by its id or by one of its steps', () => {
    const items = S.sessionItems([row('step-1', 'running', { task_id: 't1' })]);
    assert.deepEqual(W.unseenLive(items, []).map(i => [i.kind, i.id]), [['task', 't1']]);
    assert.deepEqual(W.unseenLive(items, [shown('t1')]), []);
    assert.deepEqual([...W.shownIds([shown('t1', ['step-1', ''])])].sort(), ['step-1', 't1']);
  });

  test('a turn not started yet (no id) hides nothing', () => {
    const items = S.sessionItems([row('r9', 'running')]);
    assert.deepEqual(W.unseenLive(items, [R.emptyRun(0)]).map(i => i.id), ['r9']);
  });
});

/** Timers run by hand: `due()` fires the earliest. */
function manualTimers() {
  const pending = [];
  return {
    pending,
    set: (callback, ms) => {
      const handle = { callback, ms };
      pending.push(handle);
      return handle;
    },
    clear: handle => {
      const i = pending.indexOf(handle);
      if (i >= 0) pending.splice(i, 1);
    },
    async due() {
      const next = pending.shift();
      next.callback();
      await new Promise(r => setImmediate(r));
      return next.ms;
    }
  };
}

describe('the pace of asking', () => {
  test('every interval while active; doubled after each failure, capped; reset by a success', async () => {
    const timers = manualTimers();
    let calls = 0;
    let fail = true;
    const poller = new W.Poller(
      async () => {
        calls++;
        if (fail) throw new Error('503');
      },
      () => true,
      { interval: 2000, max: 10_000, timers }
    );
    poller.start();
    poller.start(); // once
    assert.equal(timers.pending.length, 1);
    const waits = [];
    for (let i = 0; i < 4; i++) waits.push(await timers.due());
    assert.deepEqual(waits, [2000, 4000, 8000, 10_000]);
    assert.equal(poller.failures, 4);
    fail = false;
    await timers.due();
    assert.equal(poller.failures, 0);
    assert.equal(timers.pending[0].ms, 2000);
    assert.equal(calls, 5);
  });

  test('not asked while inactive (busy, no session); nothing after stop or dispose', async () => {
    const timers = manualTimers();
    let calls = 0;
    let active = false;
    const poller = new W.Poller(async () => void calls++, () => active, { timers });
    poller.start();
    await timers.due();
    assert.equal(calls, 0, 'inactive: not asked');
    active = true;
    await timers.due();
    assert.equal(calls, 1);
    poller.stop();
    assert.equal(timers.pending.length, 0, 'stopped: no timer left');
    poller.start();
    assert.equal(poller.running, true);
    poller.dispose();
    assert.equal(timers.pending.length, 0);
    poller.start();
    assert.equal(poller.running, false, 'disposed for good');
    assert.equal(W.nextDelay(0), W.WATCH_INTERVAL);
    assert.equal(W.nextDelay(50), W.WATCH_MAX);
  });
});

describe('pageShown', () => {
  test('a tab in the background asks nothing; in front, or with no document, it asks', () => {
    assert.equal(W.pageShown({ visibilityState: 'hidden' }), false);
    assert.equal(W.pageShown({ visibilityState: 'visible' }), true);
    assert.equal(W.pageShown(undefined), true);
  });
});
