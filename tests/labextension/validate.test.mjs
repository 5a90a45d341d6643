// Server shapes checked where they enter the panel (labextension/src/validate.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { events as E, validate as V } from './load.mjs';

test('a valid event is typed, its id a number', () => {
  const e = E.validateEvent('7', 'text.delta', '{"run_id":"r","text":"hi"}');
  assert.equal(e.seq, 7);
  assert.equal(e.type, 'text.delta');
  assert.equal(e.data.text, 'hi');
});

test('bad events are refused with a reason', () => {
  const bad = [
    ['1', 'nope', '{"run_id":"r"}', /unknown event type/],
    ['1', 'text.delta', 'not json', /not JSON/],
    ['1', 'text.delta', '[1]', /run_id/],
    ['1', 'text.delta', '{"run_id":"r"}', /missing text/],
    ['1', 'task.started', '{"run_id":"r"}', /task_id/],
    ['1', 'tool.completed', '{"run_id":"r","call_id":"c"}', /missing ok/]
  ];
  for (const [id, type, data, reason] of bad) {
    assert.throws(() => E.validateEvent(id, type, data), reason, `${type} ${data}`);
  }
});

test('runs rows are normalized; rows without ids are dropped', () => {
  const runs = V.validateRuns({
    runs: [
      { run_id: 'a', session_id: 's', started_at: 10, ended_at: 12.5, prompt: 'hi', events: 4, status: 'completed', reason: 'stop' },
      { run_id: 'b', session_id: 's', started_at: 'x', status: 'running' },
      { session_id: 's' },
      'junk'
    ]
  });
  assert.equal(runs.length, 2);
  assert.equal(runs[0].ended_at, 12.5);
  assert.equal(runs[0].prompt, 'hi');
  assert.deepEqual(
    [runs[1].started_at, runs[1].ended_at, runs[1].prompt, runs[1].events, runs[1].status],
    [0, null, null, 0, 'running']
  );
  assert.throws(() => V.validateRuns({}), /runs/);
});

test('health names the provider and any drift', () => {
  const h = V.validateHealth({ ok: false, provider: { name: 'scripted', model: 'm' }, drift: ['x'] });
  assert.equal(h.providerName, 'scripted');
  assert.equal(h.problems.length, 1);
  assert.throws(() => V.validateHealth(null), /health/);
});

test('health: remote images only when the server says true; the sandbox label by its kind', () => {
  const older = V.validateHealth({ ok: true, provider: { name: 'scripted' } });
  assert.equal(older.allowRemoteImages, false);
  assert.equal(older.sandbox, null); // an older server: no label, no error
  assert.equal(V.validateHealth({ allow_remote_images: 'yes' }).allowRemoteImages, false);
  assert.equal(V.validateHealth({ allow_remote_images: true }).allowRemoteImages, true);
  const none = V.validateHealth({ sandbox: { kind: 'none', label: 'unsandboxed: agent code runs as you' } });
  assert.deepEqual(none.sandbox, { kind: 'none', label: 'unsandboxed: agent code runs as you' });
  const bwrap = V.validateHealth({ sandbox: { kind: 'bwrap', label: 'sandboxed' } });
  assert.deepEqual(bwrap.sandbox, { kind: 'bwrap', label: 'sandboxed' });
  // a label that does not match its kind is not believed; an unknown kind shows nothing
  assert.equal(V.validateHealth({ sandbox: { kind: 'none', label: 'sandboxed' } }).sandbox.label,
    'unsandboxed: agent code runs as you');
  assert.equal(V.validateHealth({ sandbox: { kind: 'docker', label: 'sandboxed' } }).sandbox, null);
  const gateway = V.validateHealth({ sandbox: { kind: 'gateway', label: 'sandboxed' } });
  assert.deepEqual(gateway.sandbox, { kind: 'gateway', label: 'on the cluster: its isolation applies' });
  assert.equal(V.validateHealth({ sandbox: { kind: 'toString', label: 'x' } }).sandbox, null);
  assert.equal(V.validateHealth({ sandbox: 'bwrap' }).sandbox, null);
});

test('souls and artifacts keep the entries with names or ids', () => {
  assert.deepEqual(V.validateSouls({ souls: [{ name: 'planner', role: 'plan' }, { role: 'x' }] }), [
    { name: 'planner', role: 'plan', description: '' }
  ]);
  const [a] = V.validateArtifacts({ artifacts: [{ id: 'art-1', mime: 'image/png' }, { title: 'no id' }] });
  assert.equal(a.media_type, 'image/png');
  assert.throws(() => V.validateArtifact({ artifact: {} }), /id/);
});
