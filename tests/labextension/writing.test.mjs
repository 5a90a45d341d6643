// What the panel says while the model writes a tool call, estimated usage, the empty chat's hint
// (issue 46.4).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { events as E, labels as L, plain as P, run as R } from './load.mjs';

let seq = 0;
const ev = (type, data) => E.validateEvent(String(++seq), type, JSON.stringify({ run_id: 'run-1', ...data }));

function fold(events) {
  const view = R.emptyRun(1000);
  for (const e of events) R.applyEvent(view, e, 5000);
  return view;
}

const started = () => ev('run.started', { session_id: 's1', model: 'local', budget: { rounds: 8 } });

describe('a call being written', () => {
  test('tool.writing is an event the panel accepts; it needs the tool name', () => {
    assert.equal(ev('tool.writing', { index: 0, call_id: null, name: 'python', tokens: 3 }).type, 'tool.writing');
    assert.throws(() => ev('tool.writing', { index: 0, tokens: 3 }), /missing name/);
  });

  test('shows which tool and about how many tokens, growing, and no card yet', () => {
    const view = fold([started(), ev('tool.writing', { index: 0, call_id: null, name: 'python', tokens: 0 })]);
    assert.equal(L.writingLine(view), 'writing a python call…'); // its name came, nothing else yet
    assert.deepEqual(view.parts, []);
    R.applyEvent(view, ev('tool.writing', { index: 0, call_id: null, name: 'python', tokens: 1234 }));
    assert.equal(L.writingLine(view), 'writing a python call… ≈ 1,234 tokens');
  });

  test('its card replaces it once the call is requested', () => {
    const view = fold([
      started(),
      ev('tool.writing', { index: 0, call_id: 'c1', name: 'python', tokens: 40 }),
      ev('tool.requested', { call_id: 'c1', name: 'python', arguments: { code: '1' } })
    ]);
    assert.equal(L.writingLine(view), null);
    assert.equal(view.parts.length, 1);
  });

  test('the run ending (a cancel) clears it', () => {
    const view = fold([
      started(),
      ev('tool.writing', { index: 0, call_id: null, name: 'read_file', tokens: 1 }),
      ev('run.completed', { reason: 'cancelled', rounds: 1 })
    ]);
    assert.equal(L.writingLine(view), null);
  });
});

describe('estimated usage', () => {
  test('usage the gateway counted shows with ≈', () => {
    const exact = fold([started(), ev('usage', { prompt_tokens: 1000, completion_tokens: 234 })]);
    assert.equal(L.usageLine(exact), '1,234 tokens');
    const counted = fold([
      started(),
      ev('usage', { prompt_tokens: 10, completion_tokens: 2 }),
      ev('usage', { prompt_tokens: 1000, completion_tokens: 222, estimated: true })
    ]);
    assert.equal(L.usageLine(counted), '≈ 1,234 tokens');
  });
});

describe("the empty chat's hint", () => {
  test('the fenced-code hint is the scripted model only', () => {
    assert.match(P.emptyChatHint('scripted'), /```python/);
    for (const provider of ['openai', 'anthropic', 'local', 'hub', null]) {
      const hint = P.emptyChatHint(provider);
      assert.doesNotMatch(hint, /```/, provider);
      assert.match(hint, /plain words/);
    }
    assert.match(P.emptyChatHint('local'), /local model starts/);
  });
});
