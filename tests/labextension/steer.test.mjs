// Steering the live run from the panel (issue 50.2): `run.message` is a part of the answer where
// the message reached the model; what was sent from here waits (queued), is not sent (why), or
// is not delivered (the run ended first, as `run.completed` says in the words `%resolve` uses);
// a message for a run without its id yet goes once it has one; one message can wait to be sent
// as a new run once the live one ends.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { events as E, run as R, settings as Se, steer as S } from './load.mjs';

let seq = 0;
const ev = (type, data) =>
  E.validateEvent(String(++seq), type, JSON.stringify({ run_id: 'run-1', ...data }));
const started = () => ev('run.started', { session_id: 's1', model: 'm', budget: { rounds: 8 } });

describe('run.message', () => {
  test('is an event the panel accepts; it needs its id and text', () => {
    assert.equal(ev('run.message', { id: 'msg-1', text: 'x' }).type, 'run.message');
    assert.throws(() => ev('run.message', { text: 'x' }), /missing id/);
  });

  test('is a part of the answer where it took effect, between the rounds', () => {
    const view = R.emptyRun(0);
    for (const e of [
      started(),
      ev('text.delta', { text: 'Plotting.' }),
      ev('run.message', { id: 'msg-1', text: 'only the table' }),
      ev('text.delta', { text: 'Here is the table.' })
    ]) {
      R.applyEvent(view, e);
    }
    assert.deepEqual(
      view.parts.map(p => p.kind),
      ['text', 'message', 'text']
    );
    assert.deepEqual(view.parts[1], { kind: 'message', id: 'msg-1', text: 'only the table' });
  });

  test('messages the run ended before reading are one line, in the words of %resolve', () => {
    const view = R.emptyRun(0);
    R.applyEvent(view, started());
    R.applyEvent(
      view,
      ev('run.completed', { reason: 'budget', rounds: 8, undelivered_messages: ['a', 'b'] })
    );
    assert.deepEqual(view.errors, [
      '2 message(s) you sent did not reach the agent: the run ended (budget) before its next step'
    ]);
  });
});

describe('Steering', () => {
  function steering(post) {
    let changes = 0;
    const s = new S.Steering(post, () => changes++);
    return { s, changes: () => changes };
  }

  test('a message is queued, then delivered once its run.message comes', async () => {
    const posted = [];
    const { s } = steering(async (run, text) => {
      posted.push([run, text]);
      return 'msg-7';
    });
    const view = R.emptyRun(0);
    R.applyEvent(view, started());
    await s.send(view, '  use body_mass_g \n');
    assert.deepEqual(posted, [[{ runId: 'run-1', task: false }, 'use body_mass_g']]);
    const [item] = s.pending(view);
    assert.equal(S.steerState(item, view), 'queued');
    assert.match(S.steerNote('queued', null), /next step/);
    R.applyEvent(view, ev('run.message', { id: 'msg-7', text: 'use body_mass_g' }));
    assert.equal(S.steerState(item, view), 'delivered');
    assert.deepEqual(s.pending(view), []); // the answer shows it now
  });

  test('a refused message says why; one the run ended before reading is not delivered', async () => {
    const { s } = steering(async (_run, text) => {
      if (text === 'too much') throw new Error('8 messages are waiting');
      return 'msg-1';
    });
    const view = R.emptyRun(0);
    R.applyEvent(view, started());
    await s.send(view, 'too much');
    await s.send(view, 'later');
    const [refused, late] = s.pending(view);
    assert.equal(S.steerState(refused, view), 'failed');
    assert.equal(S.steerNote('failed', refused.error), 'not sent: 8 messages are waiting');
    R.applyEvent(view, ev('run.completed', { reason: 'stop', rounds: 1 }), 9);
    assert.equal(S.steerState(late, view), 'undelivered');
  });

  test('a message sent before the run has its id goes once it has one', async () => {
    const posted = [];
    const { s } = steering(async run => {
      posted.push(run.runId);
      return 'msg-1';
    });
    const view = R.emptyRun(0);
    await s.send(view, 'early');
    assert.deepEqual(posted, []);
    assert.equal(S.steerState(s.pending(view)[0], view), 'sending');
    R.applyEvent(view, started());
    await s.flush(view);
    await s.flush(view); // once only
    assert.deepEqual(posted, ['run-1']);
    assert.equal(s.pending(view)[0].state, 'queued');
  });

  test('a task is steered through its task; a message can wait to go as a new run', async () => {
    const posted = [];
    const { s, changes } = steering(async run => {
      posted.push(run);
      return 'm';
    });
    const task = R.emptyRun(0, true);
    R.applyEvent(task, E.validateEvent('1', 'task.started', JSON.stringify({ task_id: 'task-1', session_id: 's' })));
    await s.send(task, 'x');
    assert.deepEqual(posted, [{ runId: 'task-1', task: true }]);
    s.later(' then summarise ');
    assert.equal(s.next, 'then summarise');
    assert.ok(changes() >= 2);
    const sent = [];
    s.ended(text => sent.push(text));
    s.ended(text => sent.push(text));
    assert.deepEqual(sent, ['then summarise']);
  });

  test('the answer of a post names the message, else it is refused', () => {
    assert.equal(S.queuedId({ id: 'msg-1', run_id: 'r', status: 'queued' }), 'msg-1');
    assert.throws(() => S.queuedId({ status: 'queued' }), /no message id/);
  });
});

test('while a run works, the message box says what its key does', () => {
  assert.match(Se.composerHint('Enter', true), /^Steer the running answer… \(Enter: /);
  assert.equal(
    Se.composerHint('Ctrl+Enter'),
    'Ask Resolve… (Ctrl+Enter sends, Enter breaks the line)'
  );
});
