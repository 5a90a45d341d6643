// Folding events into the run view (labextension/src/run.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { events as E, labels as L, run as R, sessions as Se } from './load.mjs';

// Golden runs recorded from real runs, read by the magics' tests too (test_view_model.py).
const GOLDEN = new URL('../fixtures/runs/', import.meta.url);
const EXPECTED = JSON.parse(readFileSync(new URL('expected.json', GOLDEN), 'utf8'));

let seq = 0;
const ev = (type, data) => ({ seq: ++seq, type, data: { run_id: 'run-1', ...data } });

function fold(events, start = 1000, now = 5000) {
  const view = R.emptyRun(start);
  for (const e of events) R.applyEvent(view, e, now);
  return view;
}

describe('applyEvent', () => {
  test('a compaction is accepted and kept as a quiet note', () => {
    const frame = E.validateEvent('2', 'context.compacted', JSON.stringify({ run_id: 'r', summary: 'dropped 1 turn' }));
    const view = fold([frame]);
    assert.equal(view.compaction.note, 'dropped 1 turn');
    assert.equal(L.compactionLine(view.compaction), 'context compacted: dropped 1 turn');
    assert.deepEqual(view.parts, [{ kind: 'compaction', compaction: view.compaction }]);
  });

  test('a chat run: prompt, text, a tool card, usage and the end', () => {
    const view = fold([
      ev('run.started', { session_id: 's1', model: 'scripted', soul: null, budget: { rounds: 8 }, prompt: 'hi' }),
      ev('text.delta', { text: 'Hel' }),
      ev('text.delta', { text: 'lo' }),
      ev('tool.requested', { call_id: 'c1', name: 'python', arguments: { code: '1' } }),
      ev('tool.started', { call_id: 'c1', name: 'python' }),
      ev('tool.completed', { call_id: 'c1', name: 'python', ok: true, output: '1', ms: 12 }),
      ev('usage', { prompt_tokens: 10, completion_tokens: 5 }),
      ev('run.completed', { reason: 'stop', rounds: 2 })
    ]);
    assert.equal(view.prompt, 'hi');
    assert.equal(view.sessionId, 's1');
    assert.equal(view.budget, 8);
    assert.deepEqual(view.parts.map(p => p.kind), ['text', 'tool']);
    assert.equal(L.answerText(view), 'Hello');
    assert.equal(view.tools.c1.status, 'done');
    assert.equal(view.tools.c1.ms, 12);
    assert.equal(view.promptTokens + view.completionTokens, 15);
    assert.equal(view.rounds, 2);
    assert.equal(view.reason, 'stop');
    assert.equal(view.lastEventId, seq);
    // the end is stamped with the time given (a replay passes the run's own end)
    assert.equal(view.endedAt, 5000);
    assert.ok(R.isFinished(view));
  });

  test('a running call shows what it prints and displays, until its result replaces it', () => {
    const frame = (type, data) => E.validateEvent(String(++seq), type, JSON.stringify({ run_id: 'run-1', ...data }));
    const png = { 'image/png': 'iVBORw0KGgo=' };
    const live = [
      frame('run.started', { session_id: 's' }),
      frame('tool.requested', { call_id: 'c1', name: 'python', arguments: { code: 'work()' } }),
      frame('tool.started', { call_id: 'c1', name: 'python' }),
      frame('tool.output', { call_id: 'c1', stream: 'stdout', text: 'step 1\n' }),
      frame('tool.output', { call_id: 'c1', stream: 'stderr', text: 'a warning\n' }),
      frame('tool.output', { call_id: 'c1', stream: 'display', mime: png, display_id: 'd1' })
    ];
    const view = fold(live);
    assert.equal(view.tools.c1.status, 'running');
    assert.equal(view.tools.c1.output, 'step 1\na warning\n');
    assert.deepEqual(view.tools.c1.mime, png);
    assert.deepEqual(view.parts.map(p => p.kind), ['tool'], 'live output adds no part');
    R.applyEvent(view, frame('tool.completed', { call_id: 'c1', name: 'python', ok: true, output: 'step 1\n', mime: null }));
    assert.equal(view.tools.c1.status, 'done');
    assert.equal(view.tools.c1.output, 'step 1\n', 'the result replaces the live output');
    assert.equal(view.tools.c1.mime, null);
  });

  test('tool.output of another shape is refused where it enters', () => {
    const bad = data => () => E.validateEvent('1', 'tool.output', JSON.stringify({ run_id: 'r', ...data }));
    assert.throws(bad({ stream: 'stdout', text: 'no call id' }), /missing call_id/);
    assert.throws(bad({ call_id: 'c1', text: 'no stream' }), /missing stream/);
    assert.throws(bad({ call_id: 'c1', stream: 'html', text: 'x' }), /stream must be/);
  });

  test('calls cut off by a cancel are cancelled, the running one and the one still waiting', () => {
    const view = fold([
      ev('run.started', { session_id: 's' }),
      ev('tool.requested', { call_id: 'c1', name: 'python' }),
      ev('tool.started', { call_id: 'c1', name: 'python' }),
      ev('tool.approval', { call_id: 'c2', name: 'shell', state: 'waiting' }),
      ev('run.completed', { reason: 'cancelled', rounds: 1 })
    ]);
    assert.equal(view.tools.c1.status, 'cancelled');
    assert.equal(view.tools.c2.status, 'cancelled');
  });

  test('a call open when a run fails was interrupted', () => {
    const view = fold([
      ev('run.started', { session_id: 's' }),
      ev('tool.started', { call_id: 'c1', name: 'python' }),
      ev('run.error', { code: 'runtime_died', message: 'gone' }),
      ev('run.completed', { reason: 'error', rounds: 1 })
    ]);
    assert.equal(view.tools.c1.status, 'interrupted');
    assert.equal(R.statusLabel(view.tools.c1.status), 'interrupted');
    assert.deepEqual(view.errors, ['runtime_died: gone']);
    assert.equal(L.emptySummary(view), 'No answer (error).');
  });

  test('approval states move a card: waiting, approved, then done', () => {
    const view = fold([ev('run.started', { session_id: 's' })]);
    R.applyEvent(view, ev('tool.approval', { call_id: 'c', name: 'python', arguments: { code: 'x' }, state: 'waiting' }));
    assert.deepEqual(R.waitingCalls(view).map(c => c.callId), ['c']);
    R.applyEvent(view, ev('tool.approval', { call_id: 'c', state: 'approved' }));
    assert.equal(view.tools.c.status, 'approved');
    assert.ok(view.tools.c.approved);
    assert.deepEqual(R.waitingCalls(view), []);
    R.applyEvent(view, ev('tool.completed', { call_id: 'c', ok: false, output: 'boom' }));
    assert.equal(view.tools.c.status, 'error');
    assert.equal(R.statusLabel(view.tools.c.status), 'failed');
  });

  test('a task: steps open and close with their child runs, the goal is the prompt', () => {
    const view = R.emptyRun(0, true);
    const t = (type, data) => ({ seq: ++seq, type, data });
    R.applyEvent(view, t('task.started', { task_id: 'task-1', session_id: 's', goal: 'find 42', chain: ['planner', 'specialist'] }));
    assert.equal(view.prompt, 'find 42');
    R.applyEvent(view, t('run.started', { run_id: 'r1', session_id: 's', role: 'planner', budget: { rounds: 4 } }));
    assert.deepEqual(view.steps.map(s => [s.soul, s.runId, s.done]), [['planner', 'r1', false], ['specialist', '', false]]);
    R.applyEvent(view, t('run.completed', { run_id: 'r1', reason: 'stop', rounds: 1 }));
    assert.equal(view.endedAt, null, 'a step ending does not end the task');
    R.applyEvent(view, t('run.started', { run_id: 'r2', session_id: 's', role: 'specialist', budget: { rounds: 8 } }));
    R.applyEvent(view, t('run.completed', { run_id: 'r2', reason: 'stop', rounds: 2 }));
    R.applyEvent(view, t('task.completed', { task_id: 'task-1', reason: 'stop' }), 99);
    assert.deepEqual(view.steps.map(s => s.done), [true, true]);
    assert.equal(view.rounds, 3);
    assert.equal(view.budget, 12);
    assert.equal(view.endedAt, 99);
  });
});

describe('golden runs (tests/fixtures/runs), folded as the magics fold them', () => {
  const names = readdirSync(GOLDEN)
    .filter(f => f.endsWith('.jsonl'))
    .map(f => f.slice(0, -'.jsonl'.length))
    .sort();

  test('every golden run has expectations, and the labels are the one vocabulary', () => {
    assert.deepEqual(names, Object.keys(EXPECTED.runs).sort());
    assert.deepEqual(R.STATUS_LABELS, EXPECTED.labels);
  });

  for (const name of names) {
    test(name, () => {
      const view = R.emptyRun(0);
      for (const line of readFileSync(new URL(`${name}.jsonl`, GOLDEN), 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const { seq, type, data } = JSON.parse(line);
        // through the shape check every event from the server passes first
        R.applyEvent(view, E.validateEvent(String(seq), type, JSON.stringify(data)), 1);
      }
      const calls = {};
      for (const call of Object.values(view.tools)) {
        calls[call.callId] = { name: call.name, status: call.status, label: R.statusLabel(call.status) };
      }
      assert.deepEqual(
        {
          reason: view.reason,
          summary: L.emptySummary(view),
          errors: view.errors,
          rounds: view.rounds,
          budget: view.budget,
          tokens: view.promptTokens + view.completionTokens,
          calls,
          messages: view.parts.filter(p => p.kind === 'message').map(p => p.text)
        },
        EXPECTED.runs[name]
      );
      assert.ok(R.isFinished(view));
    });
  }
});

describe('sessionItems', () => {
  const info = (run_id, started_at, extra = {}) => ({
    run_id,
    session_id: 's',
    started_at,
    ended_at: started_at + 1,
    status: 'completed',
    task_id: null,
    ...extra
  });

  test('runs are turns in start order; the steps of a task make one turn', () => {
    const items = Se.sessionItems([
      info('r3', 30),
      info('step2', 21, { task_id: 'task-1' }),
      info('r1', 10),
      info('step1', 20, { task_id: 'task-1' })
    ]);
    assert.deepEqual(
      items.map(i => [i.kind, i.id, i.startedAt, i.endedAt, i.live]),
      [
        ['run', 'r1', 10, 11, false],
        ['task', 'task-1', 20, 22, false],
        ['run', 'r3', 30, 31, false]
      ]
    );
  });

  test('a task with a running step is live and has no end yet', () => {
    const [task] = Se.sessionItems([
      info('step1', 20, { task_id: 't' }),
      info('step2', 21, { task_id: 't', status: 'running', ended_at: null })
    ]);
    assert.equal(task.live, true);
    assert.equal(task.endedAt, null);
  });
});
