// Issue 16, the panel's pure parts: the instructions a run read, a compaction's quiet line, the
// transcript view, and a cached run from an older panel read back.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { events as E, labels as L, run as R, state as St, transcript as T, validate as V } from './load.mjs';

function fold(events) {
  const view = R.emptyRun(0);
  events.forEach(([type, data], i) =>
    R.applyEvent(view, E.validateEvent(String(i + 1), type, JSON.stringify({ run_id: 'run-1', ...data })), 9)
  );
  return view;
}

describe('run.started context', () => {
  test('names the project instructions the run read', () => {
    const view = fold([
      ['run.started', {
        session_id: 's',
        context: {
          instructions: [
            { path: 'AGENTS.md', sha256: 'ab'.repeat(32), cut: false },
            { path: '.resolve/instructions.md', sha256: 'cd'.repeat(32), cut: true },
            { sha256: 'no path' }
          ],
          tokens_estimate: 812
        }
      }]
    ]);
    assert.deepEqual(view.instructions.map(i => [i.path, i.cut]), [['AGENTS.md', false], ['.resolve/instructions.md', true]]);
  });

  test('a run without context (an older server) reads none', () => {
    const view = fold([['run.started', { session_id: 's' }]]);
    assert.deepEqual(view.instructions, []);
    assert.deepEqual(view.mentions, []);
  });
});

describe('context.compacted', () => {
  test('a quiet line with the tokens before and after', () => {
    const note = 'elided 3 old tool outputs; dropped the 2 oldest turns to fit 100000 tokens';
    const view = fold([
      ['run.started', { session_id: 's' }],
      ['context.compacted', { before_tokens: 131072, after_tokens: 60210, turns: 2, elided: 3, note, summary: 'The person asked for x; the frame has 3 rows.' }]
    ]);
    assert.deepEqual(view.compaction, {
      note,
      summary: 'The person asked for x; the frame has 3 rows.',
      beforeTokens: 131072,
      afterTokens: 60210,
      turns: 2
    });
    assert.equal(L.compactionLine(view.compaction), `context compacted: 131,072 → 60,210 tokens · ${note}`);
    assert.deepEqual(view.parts, [{ kind: 'compaction', compaction: view.compaction }]);
    assert.equal(L.answerText(view), '', 'not part of the answer');
  });

  test('each compaction is shown where it happened: before the first round, between rounds', () => {
    const view = fold([
      ['run.started', { session_id: 's' }],
      ['context.compacted', { before_tokens: 9000, after_tokens: 6000, note: 'elided 2 old tool outputs to fit 7000 tokens' }],
      ['text.delta', { text: 'Looking.' }],
      ['tool.requested', { call_id: 'c1', name: 'python' }],
      ['tool.completed', { call_id: 'c1', name: 'python', ok: true, output: 'x'.repeat(50) }],
      ['context.compacted', { before_tokens: 7400, after_tokens: 6100, note: 'elided 1 tool output in this round to fit 7000 tokens' }],
      ['text.delta', { text: 'Done.' }],
      ['run.completed', { reason: 'stop', rounds: 2 }]
    ]);
    assert.deepEqual(view.parts.map(p => p.kind), ['compaction', 'text', 'tool', 'compaction', 'text']);
    assert.match(L.compactionLine(view.parts[3].compaction), /7,400 → 6,100 tokens · elided 1 tool output in this round/);
    assert.equal(view.compaction, view.parts[3].compaction, 'the latest');
    assert.equal(L.emptySummary(view), null);
  });

  test('no model summary: the note alone, not repeated', () => {
    const view = fold([['context.compacted', { before_tokens: 10, after_tokens: 5, note: 'elided 1 old tool output to fit 8 tokens', summary: 'elided 1 old tool output to fit 8 tokens' }]]);
    assert.equal(view.compaction.summary, null);
  });
});

describe('the transcript view', () => {
  const body = {
    session_id: 'session-1',
    tokens_estimate: 321,
    messages: [
      { role: 'user', content: 'My favourite number is 7319.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'python', arguments: '{"code": "print(7319*2)"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(T.RESULT_CUT + 50) },
      { role: 'assistant', content: 'Noted: 7319.' },
      { role: 'elf', content: 'dropped' }
    ]
  };

  test('the answer is checked, strange messages dropped', () => {
    const t = V.validateTranscript(body);
    assert.equal(t.session_id, 'session-1');
    assert.equal(t.tokens_estimate, 321);
    assert.equal(t.messages.length, 4);
    assert.deepEqual(t.messages[1].tool_calls, [{ id: 'c1', name: 'python', arguments: '{"code": "print(7319*2)"}' }]);
    assert.equal(t.messages[1].content, '');
    assert.throws(() => V.validateTranscript({ session_id: 's' }), V.ShapeError);
  });

  test('turns, calls (code shown as code) and results named after their call, cut', () => {
    const items = T.transcriptItems(V.validateTranscript(body).messages);
    assert.deepEqual(items.map(i => [i.kind, i.name]), [
      ['user', null], ['call', 'python'], ['result', 'python'], ['assistant', null]
    ]);
    assert.equal(items[1].text, 'print(7319*2)');
    assert.equal(items[2].text.length, T.RESULT_CUT);
    assert.equal(items[2].cut, 50);
    assert.equal(items[3].text, 'Noted: 7319.');
  });
});

describe('a live run cached by an older panel', () => {
  test('is read back with the newer fields empty', () => {
    const old = { ...R.emptyRun(5), runId: 'run-1', sessionId: 's1', lastEventId: 3 };
    delete old.proposals;
    delete old.mentions;
    delete old.instructions;
    delete old.compaction;
    old.compacted = null;
    const run = St.restoreLive({ sessionId: 's1', runId: 'run-1', user: 'u', run: old }).run;
    assert.deepEqual(run.proposals, {});
    assert.deepEqual(run.mentions, []);
    assert.deepEqual(run.instructions, []);
    assert.equal(run.compaction, null);
    assert.equal(run.lastEventId, 3);
  });
});
