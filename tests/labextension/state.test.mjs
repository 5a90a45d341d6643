// What the panel remembers across reloads (labextension/src/state.ts), over an in-memory store.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { run as R, state as St } from './load.mjs';

/** A store like the workspace's: values go through JSON, as they do to the server and back. */
class MemoryStore {
  constructor(initial = {}) {
    this.data = new Map(Object.entries(initial).map(([k, v]) => [k, JSON.stringify(v)]));
    this.writes = [];
  }
  async fetch(id) {
    const raw = this.data.get(id);
    return raw === undefined ? undefined : JSON.parse(raw);
  }
  async save(id, value) {
    this.writes.push(id);
    this.data.set(id, JSON.stringify(value));
  }
  async remove(id) {
    this.writes.push(id);
    this.data.delete(id);
  }
}

const settle = () => new Promise(resolve => setTimeout(resolve, 0));

let seq = 0;
const ev = (type, data) => ({ seq: ++seq, type, data: { run_id: 'run-1', ...data } });

/** A run folded to a tool call still running. */
function liveRun() {
  const view = R.emptyRun(1000);
  for (const e of [
    ev('run.started', { session_id: 's1', model: 'scripted', soul: null, budget: { rounds: 8 }, prompt: 'wait' }),
    ev('text.delta', { text: 'Waiting…' }),
    ev('tool.requested', { call_id: 'c1', name: 'python', arguments: { code: 'sleep' } }),
    ev('tool.started', { call_id: 'c1', name: 'python' })
  ]) {
    R.applyEvent(view, e, 2000);
  }
  return view;
}

describe('PanelState', () => {
  test('a reload restores the live run where it was, to resume from its last event', async () => {
    const store = new MemoryStore();
    const before = new St.PanelState(store);
    await before.restore();
    const run = liveRun();
    before.setCurrent('s1');
    before.rememberPrompt('s1', run.runId, 'wait', 5);
    before.setLive(St.liveSnapshot('wait', run));
    await settle();

    const after = new St.PanelState(store); // the page reloaded
    await after.restore();
    assert.equal(after.current, 's1');
    assert.equal(after.live.runId, 'run-1');
    assert.equal(after.live.sessionId, 's1');
    assert.equal(after.live.user, 'wait');
    assert.deepEqual(after.live.run, run);
    assert.equal(after.live.run.lastEventId, seq);
    assert.equal(after.live.run.tools.c1.status, 'running');
    assert.deepEqual(after.sessions.s1.prompts, { 'run-1': 'wait' });
  });

  test('the notebook the chat is bound to survives a reload; unbinding forgets it', async () => {
    const store = new MemoryStore({ [St.StateKeys.notebook]: 42 }); // an older shape: ignored
    const first = new St.PanelState(store);
    await first.restore();
    assert.equal(first.notebook, null);
    first.setNotebook('work/analysis.ipynb');
    await settle();
    const reloaded = new St.PanelState(store);
    await reloaded.restore();
    assert.equal(reloaded.notebook, 'work/analysis.ipynb');
    reloaded.setNotebook(null);
    await settle();
    assert.equal(store.data.has(St.StateKeys.notebook), false);
  });

  test('an ended run, a new session and a finished cache are forgotten', async () => {
    const store = new MemoryStore();
    const state = new St.PanelState(store);
    await state.restore();
    const run = liveRun();
    state.setCurrent('s1');
    state.setLive(St.liveSnapshot('wait', run));
    R.applyEvent(run, ev('run.completed', { reason: 'stop', rounds: 1 }), 3000);
    state.setLive(St.liveSnapshot('wait', run));
    state.setCurrent(null);
    await settle();
    assert.equal(store.data.has(St.StateKeys.live), false);
    assert.equal(store.data.has(St.StateKeys.current), false);
    const again = new St.PanelState(store);
    await again.restore();
    assert.equal(again.live, null);
    assert.equal(again.current, null);
  });

  test('what is written before the store answers wins over what it held', async () => {
    const store = new MemoryStore({
      [St.StateKeys.current]: 'old',
      [St.StateKeys.sessions]: { old: { id: 'old', title: 'Old', startedAt: 1, prompts: { r0: 'hi' } } }
    });
    const state = new St.PanelState(store);
    state.setCurrent('new');
    state.rememberPrompt('new', 'r1', 'hello', 2);
    await state.restore();
    assert.equal(state.current, 'new');
    assert.deepEqual(Object.keys(state.sessions).sort(), ['new', 'old']);
    assert.equal(state.sessions.new.title, 'hello');
    await settle();
    // one write a key, after the read, with what was read merged in
    assert.deepEqual(store.writes.sort(), [St.StateKeys.current, St.StateKeys.sessions].sort());
    assert.deepEqual(Object.keys(await store.fetch(St.StateKeys.sessions)).sort(), ['new', 'old']);
  });

  test('a reload before the workspace is saved keeps what changed, from the tab', async () => {
    // JupyterLab saves the workspace a moment after its last change: a reload just after a task
    // began lost the session shown, and the panel came back empty
    const tab = new Map();
    const storage = { getItem: k => tab.get(k) ?? null, setItem: (k, v) => tab.set(k, v), removeItem: k => tab.delete(k) };
    const saved = new MemoryStore({ [St.StateKeys.current]: 'older' });
    const lost = { fetch: k => saved.fetch(k), save: async () => {}, remove: async () => {} };
    const before = new St.PanelState(lost, storage, 'default/');
    await before.restore();
    assert.equal(before.current, 'older');
    before.setCurrent('s1');
    before.rememberPrompt('s1', 'task-1', 'Find out what 6*7 is.', 5);
    before.setNotebook(null);
    await settle();
    assert.equal(await saved.fetch(St.StateKeys.current), 'older'); // the workspace missed it

    const after = new St.PanelState(saved, storage, 'default/'); // the page reloaded
    assert.equal(after.current, 's1');
    await after.restore();
    assert.equal(after.current, 's1');
    assert.equal(after.notebook, null);
    assert.deepEqual(after.sessions.s1.prompts, { 'task-1': 'Find out what 6*7 is.' });
    await settle();
    // the workspace catches up with what it missed, and only that
    assert.equal(await saved.fetch(St.StateKeys.current), 's1');
    assert.deepEqual(saved.writes.sort(), [St.StateKeys.current, St.StateKeys.sessions].sort());
    // another workspace's keys are its own; a tab without storage has the workspace's values
    const other = new St.PanelState(new MemoryStore(), storage, 'other/');
    await other.restore();
    assert.equal(other.current, null);
    const noStorage = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('denied'); }, removeItem: () => {} };
    const plain = new St.PanelState(saved, noStorage, 'default/');
    await plain.restore();
    assert.equal(plain.current, 's1');
    plain.setCurrent('s2');
    assert.equal(plain.current, 's2');
  });

  test('a store that fails leaves an empty state, not an error', async () => {
    const broken = {
      fetch: async () => { throw new Error('no workspace'); },
      save: async () => { throw new Error('read-only'); },
      remove: async () => { throw new Error('read-only'); }
    };
    const state = new St.PanelState(broken);
    await state.restore();
    assert.equal(state.current, null);
    assert.equal(state.live, null);
    const warn = console.warn;
    const warned = [];
    console.warn = (...args) => warned.push(args.join(' '));
    try {
      state.setCurrent('s1');
      await settle();
    } finally {
      console.warn = warn;
    }
    assert.equal(state.current, 's1');
    assert.match(warned.join('\n'), /could not save jupyter-resolve:current-session/);
  });
});

describe('restoring what a workspace held', () => {
  test('sessions of another shape are dropped, good ones kept', () => {
    const sessions = St.restoreSessions({
      s1: { id: 's1', title: 'One', startedAt: 5, prompts: { r1: 'a', r2: 7 } },
      s2: { id: 'other', title: 'Two', startedAt: 5, prompts: {} },
      s3: 'nope',
      s4: { id: 's4', title: 'Four' }
    });
    assert.deepEqual(sessions, {
      s1: { id: 's1', title: 'One', startedAt: 5, prompts: { r1: 'a' } },
      s4: { id: 's4', title: 'Four', startedAt: 0, prompts: {} }
    });
    assert.deepEqual(St.restoreSessions(null), {});
    assert.deepEqual(St.restoreSessions([1]), {});
  });

  test('a live run keeps its ids even when its view is unusable (replay from the start)', () => {
    const run = liveRun();
    assert.deepEqual(St.restoreLive({ sessionId: 's1', runId: 'run-1', user: 'u', run }).run, run);
    const olderShape = { sessionId: 's1', runId: 'run-1', user: 'u', run: { runId: 'run-1' } };
    assert.deepEqual(St.restoreLive(olderShape), { sessionId: 's1', runId: 'run-1', user: 'u', run: null });
    const otherRun = { sessionId: 's1', runId: 'run-2', user: 'u', run };
    assert.equal(St.restoreLive(otherRun).run, null);
    const ended = { ...run, endedAt: 3000 };
    assert.equal(St.restoreLive({ sessionId: 's1', runId: 'run-1', user: 'u', run: ended }).run, null);
    // the localStorage shape of before ({sessionId, user, run}) has no runId: nothing to resume
    assert.equal(St.restoreLive({ sessionId: 's1', user: 'u', run }), null);
    assert.equal(St.restoreLive(null), null);
    assert.equal(St.restoreCurrent(''), null);
    assert.equal(St.restoreCurrent(3), null);
    assert.equal(St.restoreCurrent('s1'), 's1');
  });
});

describe('liveSnapshot', () => {
  test('nothing before the run has its ids, nor after it ended', () => {
    assert.equal(St.liveSnapshot('u', R.emptyRun(1)), null);
    const run = liveRun();
    run.endedAt = 5;
    assert.equal(St.liveSnapshot('u', run), null);
  });

  test('a view over the cap keeps only the ids', () => {
    const run = liveRun();
    assert.equal(St.liveSnapshot('u', run, 10).run, null);
    assert.equal(St.liveSnapshot('u', run, 10).runId, 'run-1');
    assert.equal(St.liveSnapshot('u', run).run, run);
  });
});

test('withPrompt names a new session by its first prompt and keeps the others', () => {
  const one = St.withPrompt({}, 's1', 'r1', 'x'.repeat(80), 7);
  assert.equal(one.s1.title, 'x'.repeat(60));
  assert.equal(one.s1.startedAt, 7);
  const two = St.withPrompt(one, 's1', 'r2', 'again', 9);
  assert.deepEqual(two.s1.prompts, { r1: 'x'.repeat(80), r2: 'again' });
  assert.equal(two.s1.startedAt, 7);
  assert.deepEqual(one.s1.prompts, { r1: 'x'.repeat(80) }, 'the old value is not changed');
});

test('cacheLive keeps every event of a live run but its text at most once a second', async () => {
  const store = new MemoryStore();
  const state = new St.PanelState(store);
  await state.restore();
  const saves = async () => {
    await settle();
    return store.writes.filter(id => id === St.StateKeys.live).length;
  };
  const run = liveRun();
  state.cacheLive('wait', run, 10_000);
  assert.equal(await saves(), 1, 'a tool event is kept at once');
  R.applyEvent(run, ev('text.delta', { text: ' still' }), 10_100);
  state.cacheLive('wait', run, 10_100);
  assert.equal(await saves(), 1, 'text within the second waits');
  state.cacheLive('wait', run, 11_100);
  assert.equal(await saves(), 2, 'text after the second is kept');
  R.applyEvent(run, ev('tool.requested', { call_id: 'c2', name: 'python', arguments: {} }), 11_200);
  state.cacheLive('wait', run, 11_200);
  assert.equal(await saves(), 3, 'a new call is kept within the second too');
  R.applyEvent(run, ev('run.completed', { reason: 'stop', rounds: 1 }), 11_300);
  state.cacheLive('wait', run, 11_300);
  assert.equal(await saves(), 4);
  assert.equal(state.live, null, 'a finished run is forgotten');
  assert.equal(store.data.has(St.StateKeys.live), false);
});
