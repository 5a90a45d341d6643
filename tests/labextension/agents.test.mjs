// Issue 36, the panel's part: the external agents `GET resolve/api/agents` lists, the picker's
// value for one, the chat body that asks one (`agent` instead of `soul`), and a run that names
// its agent in `run.started`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agents as A, events as E, run as R, state as St } from './load.mjs';

describe('GET resolve/api/agents', () => {
  test('read: name, description, state, error; bad names dropped, duplicates once', () => {
    const body = {
      agents: [
        { name: 'echo', description: 'An echo agent', state: 'idle', error: null },
        { name: 'coder', description: 'Codes', state: 'error', error: 'exited (1): [withheld]' },
        { name: 'busy', state: 'running' },
        { name: 'odd', state: 'exploded', description: 7 },
        { name: 'echo', description: 'again', state: 'running' },
        { name: '../x', state: 'idle' },
        { description: 'no name' },
        'echo'
      ]
    };
    assert.deepEqual(A.validateAgents(body), [
      { name: 'echo', description: 'An echo agent', state: 'idle', error: null },
      { name: 'coder', description: 'Codes', state: 'error', error: 'exited (1): [withheld]' },
      { name: 'busy', description: '', state: 'running', error: null },
      { name: 'odd', description: '', state: 'idle', error: null }
    ]);
  });

  test('an empty list is none; another shape is an error', () => {
    assert.deepEqual(A.validateAgents({ agents: [] }), []);
    for (const bad of [null, [], { agents: {} }, 'agents']) {
      assert.throws(() => A.validateAgents(bad), /agents: expected/);
    }
  });
});

describe('the chat body', () => {
  const base = { sessionId: 's1', soul: '', model: '', notebook: null };
  const message = [{ role: 'user', content: 'hi' }];

  test('an external agent picked: `agent`, no soul and no model', () => {
    assert.equal(A.agentPick('echo'), 'agent:echo');
    assert.deepEqual(A.parsePick('agent:echo'), { agent: 'echo' });
    assert.deepEqual(A.chatBody('hi', { ...base, soul: A.agentPick('echo'), model: 'gpt-4o' }), {
      messages: message,
      session_id: 's1',
      agent: 'echo'
    });
  });

  test('a soul picked: `soul` (and the model), never `agent`', () => {
    assert.deepEqual(A.parsePick('planner'), { soul: 'planner' });
    assert.deepEqual(A.chatBody('hi', { ...base, soul: 'planner', model: 'gpt-4o' }), {
      messages: message,
      session_id: 's1',
      soul: 'planner',
      model: 'gpt-4o'
    });
    assert.deepEqual(A.chatBody('hi', { ...base, sessionId: null }), { messages: message });
  });

  test('mentions go only with a notebook, and only when there are some', () => {
    const body = A.chatBody('hi @df', { ...base, notebook: 'a.ipynb', mentions: ['df'] });
    assert.deepEqual(body.mentions, [{ name: 'df' }]);
    assert.equal(body.notebook, 'a.ipynb');
    assert.equal('mentions' in A.chatBody('hi', { ...base, notebook: 'a.ipynb', mentions: [] }), false);
    assert.equal('mentions' in A.chatBody('hi', { ...base, mentions: ['df'] }), false);
  });
});

describe('a run an external agent answered', () => {
  const fold = data => {
    const view = R.emptyRun(0);
    R.applyEvent(view, E.validateEvent('1', 'run.started', JSON.stringify({ run_id: 'r1', session_id: 's', ...data })));
    return view;
  };

  test('run.started names the agent; a soul run has none', () => {
    assert.equal(fold({ agent: 'echo', soul: null, model: 'acp:echo' }).agent, 'echo');
    assert.equal(fold({ soul: 'planner' }).agent, null);
    assert.equal(fold({ agent: '' }).agent, null);
  });

  test('a cached run from an older panel reads back with no agent', () => {
    const view = fold({ agent: 'echo' });
    const { agent, ...older } = view;
    assert.equal(St.restoreRun(older).agent, null);
    assert.equal(St.restoreRun(view).agent, 'echo');
  });
});
