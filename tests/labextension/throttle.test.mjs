// The render throttle of streamed Markdown (issue 30): text shows while it streams, not only
// once the model pauses. A hand-driven clock stands in for the window's timers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { throttle as T } from './load.mjs';

/** A clock whose time moves only when the test says; timers fire as it passes them. */
function manualClock() {
  let now = 0;
  let next = 1;
  const timers = new Map();
  return {
    now: () => now,
    setTimeout(callback, ms) {
      timers.set(next, { at: now + ms, callback });
      return next++;
    },
    clearTimeout: id => timers.delete(id),
    pending: () => timers.size,
    /** Move time forward by `ms`, firing each timer that comes due, in order. */
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].callback();
      }
      now = end;
    }
  };
}

/** A throttle over a text that the test grows; `shown` is what each render drew. */
function streamed(interval = 80) {
  const clock = manualClock();
  const state = { text: '', shown: [] };
  const throttle = new T.RenderThrottle(() => void state.shown.push(state.text), interval, clock);
  const piece = text => {
    state.text += text;
    throttle.changed();
  };
  return { clock, state, throttle, piece };
}

test('the first piece renders at once', () => {
  const { clock, state, piece } = streamed();
  piece('Hel');
  clock.advance(0);
  assert.deepEqual(state.shown, ['Hel']);
});

test('a steady stream faster than the interval renders while it streams, not only at its end', () => {
  const { clock, state, piece } = streamed(80);
  // 100 pieces 15 ms apart: a debounce of 80 ms would render none of them before the end
  for (let i = 0; i < 100; i++) {
    piece(`${i} `);
    clock.advance(15);
  }
  const duringStream = state.shown.length;
  assert.ok(duringStream >= 10, `rendered ${duringStream} times while streaming`);
  // every render showed more text than the one before
  for (let i = 1; i < state.shown.length; i++) {
    assert.ok(state.shown[i].length > state.shown[i - 1].length);
  }
  // never more often than the interval allows: 1500 ms of stream, one render per 80 ms at most
  assert.ok(duringStream <= Math.ceil(1500 / 80) + 1, `rendered ${duringStream} times`);
});

test('the last text is always rendered', () => {
  const { clock, state, piece } = streamed(80);
  piece('a');
  clock.advance(0);
  piece('b');
  piece('c');
  clock.advance(200);
  assert.equal(state.shown.at(-1), 'abc');
  assert.equal(clock.pending(), 0, 'nothing left scheduled');
});

test('a render still running is not overlapped; the text that came meanwhile renders after it', async () => {
  const clock = manualClock();
  const shown = [];
  let text = '';
  let finish = null;
  const throttle = new T.RenderThrottle(
    () => {
      shown.push(text);
      return new Promise(ok => (finish = ok));
    },
    10,
    clock
  );
  text = 'one';
  throttle.changed();
  clock.advance(0);
  text = 'one two';
  throttle.changed();
  clock.advance(100);
  assert.deepEqual(shown, ['one'], 'no second render while the first runs');
  finish();
  await new Promise(r => setImmediate(r));
  clock.advance(100);
  assert.deepEqual(shown, ['one', 'one two']);
});

test('disposed, it renders nothing more', () => {
  const { clock, state, throttle, piece } = streamed();
  piece('x');
  throttle.dispose();
  clock.advance(1000);
  assert.deepEqual(state.shown, []);
});
