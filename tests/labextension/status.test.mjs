// What the server offers and how its parts stand (labextension/src/status.ts), the footer's
// tokens and cost (run.ts usageLine), and the events issue 19 added (validate.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { events as E, labels as L, run as R, state as St, status as S, validate as V } from './load.mjs';

let seq = 0;
const frame = (type, data) =>
  E.validateEvent(String(++seq), type, JSON.stringify({ run_id: 'run-1', ...data }));

function fold(frames) {
  const view = R.emptyRun(1000);
  for (const f of frames) R.applyEvent(view, f, 2000);
  return view;
}

describe('the footer folds usage events as %resolve does', () => {
  test('tokens summed, cache reads and writes, cost summed over completions', () => {
    const view = fold([
      frame('run.started', { session_id: 's', budget: { rounds: 8, cost: 0.5 } }),
      frame('usage', { prompt_tokens: 1000, completion_tokens: 34, cached_tokens: 900, cache_write_tokens: 0, cost: 0.003, run_cost: 0.003 }),
      frame('usage', { prompt_tokens: 150, completion_tokens: 50, cached_tokens: 0, cache_write_tokens: 50, cost: 0.0012, run_cost: 0.0042 }),
      frame('run.completed', { reason: 'stop', rounds: 2 })
    ]);
    assert.equal(view.cachedTokens, 900);
    assert.equal(view.cacheWriteTokens, 50);
    assert.equal(view.costBudget, 0.5);
    assert.equal(L.usageLine(view), '1,234 tokens (900 cached, 50 written to cache) · $0.0042 of $0.50');
  });

  test('no price known: no cost; no cache: no parentheses', () => {
    const view = fold([
      frame('run.started', { session_id: 's', budget: { rounds: 8 } }),
      frame('usage', { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, cache_write_tokens: 0 })
    ]);
    assert.equal(view.cost, null);
    assert.equal(L.usageLine(view), '15 tokens');
  });

  test('a server sending only the running total: the last run_cost', () => {
    const view = fold([
      frame('usage', { prompt_tokens: 10, completion_tokens: 5, run_cost: 0.001 }),
      frame('usage', { prompt_tokens: 10, completion_tokens: 5, run_cost: 0.0025 })
    ]);
    assert.equal(L.usageLine(view), '30 tokens · $0.0025');
  });

  test('a task sums its steps\u2019 costs (each step\u2019s run_cost starts from zero)', () => {
    const view = R.emptyRun(1000, true);
    const events = [
      ['task.started', { task_id: 't', session_id: 's', chain: ['planner', 'specialist'] }],
      ['run.started', { run_id: 'a', session_id: 's', role: 'planner', budget: { rounds: 4 } }],
      ['usage', { run_id: 'a', prompt_tokens: 100, completion_tokens: 0, cost: 0.001, run_cost: 0.001 }],
      ['run.started', { run_id: 'b', session_id: 's', role: 'specialist', budget: { rounds: 4 } }],
      ['usage', { run_id: 'b', prompt_tokens: 100, completion_tokens: 0, cost: 0.002, run_cost: 0.002 }]
    ];
    for (const [type, data] of events) {
      const f = E.validateEvent(String(++seq), type, JSON.stringify({ run_id: 'x', ...data }));
      R.applyEvent(view, f, 2000);
    }
    assert.equal(L.usageLine(view), '200 tokens · $0.0030');
  });

  test('a run view cached by an older panel gets the new fields', () => {
    const old = { ...R.emptyRun(1), runId: 'r', sessionId: 's' };
    for (const key of ['cachedTokens', 'cacheWriteTokens', 'cost', 'costBudget']) delete old[key];
    const restored = St.restoreRun(old);
    assert.equal(L.usageLine(restored), '0 tokens');
  });
});

describe('validate accepts what the server now sends', () => {
  test('every EventType of contracts/bodies.py is known to the panel', () => {
    const bodies = readFileSync(new URL('../../jupyter_resolve/contracts/bodies.py', import.meta.url), 'utf8');
    const literal = bodies.match(/EventType = Literal\[([^\]]*)\]/);
    assert.ok(literal, 'EventType in bodies.py');
    const names = [...literal[1].matchAll(/"([a-z.]+)"/g)].map(m => m[1]);
    assert.ok(names.length >= 13);
    for (const name of names) assert.ok(E.EVENT_TYPES.includes(name), name);
  });

  test('tool.requested with thinking blocks: accepted, never part of the card', () => {
    const blocks = [{ type: 'thinking', thinking: '<b>secret</b>', signature: 'sig' }, { type: 'redacted_thinking', data: 'xx' }];
    const view = fold([frame('tool.requested', { call_id: 'c1', name: 'python', arguments: { code: '1' }, thinking_blocks: blocks })]);
    assert.deepEqual(view.tools.c1.arguments, { code: '1' });
    assert.ok(!JSON.stringify(view).includes('secret'), 'the blocks are not kept in the view');
  });

  test('context.compacted with a summary of earlier runs', () => {
    const view = fold([
      frame('context.compacted', {
        before_tokens: 9000, after_tokens: 3100, turns: 2, elided: 1,
        note: 'elided 1 old tool output; dropped the 2 oldest turns to fit 4000 tokens; 2 summarized',
        summary: 'The person loaded data.csv.', summarized_runs: ['run-a', 'run-b'], summary_sha256: 'ab'.repeat(32)
      })
    ]);
    assert.equal(
      L.compactionLine(view.compaction),
      'context compacted: 9,000 → 3,100 tokens · elided 1 old tool output; dropped the 2 oldest turns to fit 4000 tokens; 2 summarized'
    );
    assert.equal(view.compaction.summary, 'The person loaded data.csv.');
  });
});

describe('models', () => {
  const answer = {
    provider: 'openai',
    default: 'gpt-4o-mini',
    allowed: null,
    models: [{ id: 'gpt-4o-mini' }, { id: 'gpt-4o', name: 'GPT-4o' }, { id: 'gpt-4o' }, { name: 'no id' }, 'junk'],
    source: 'provider',
    cached: true
  };

  test('the answer is checked; entries without ids and duplicates dropped', () => {
    const m = S.validateModels(answer);
    assert.deepEqual(m.models.map(x => [x.id, x.name, x.listed]), [['gpt-4o-mini', null, true], ['gpt-4o', 'GPT-4o', true]]);
    assert.equal(m.default, 'gpt-4o-mini');
    assert.equal(m.allowed, null);
    assert.equal(m.cached, true);
    assert.equal(S.modelsNote(m), null);
    assert.throws(() => S.validateModels({ provider: 'x' }), /models/);
  });

  test('the provider could not list: the configured names and a quiet note why', () => {
    const m = S.validateModels({
      provider: 'openai', default: 'a', allowed: ['a', 'b'], source: 'config',
      models: [{ id: 'a', listed: false }, { id: 'b', listed: false }],
      error: { code: 'provider_error', message: '401 invalid key' }
    });
    assert.equal(m.source, 'config');
    assert.deepEqual(m.models.map(x => x.listed), [false, false]);
    assert.equal(S.modelsNote(m), 'openai did not list its models (401 invalid key); showing the allowed models.');
  });

  test('the remembered choice: kept while it may be asked for, else the default', () => {
    const m = S.validateModels(answer);
    assert.equal(S.pickedModel(m, 'gpt-4o'), 'gpt-4o');
    assert.equal(S.pickedModel(m, 'gpt-4o-mini'), '', 'the default is sent as no model');
    assert.equal(S.pickedModel(m, 'gone'), '');
    assert.equal(S.pickedModel(null, 'gpt-4o'), 'gpt-4o', 'before the list loads');
    assert.equal(S.pickedModel(m, null), '');
    const allowed = S.validateModels({ ...answer, allowed: ['gpt-4o-mini'] });
    assert.equal(S.pickedModel(allowed, 'gpt-4o'), '', 'no longer allowed');
  });

  test('the choice survives a reload (IStateDB); the default forgets it', async () => {
    const data = new Map();
    const store = {
      data,
      fetch: async k => data.get(k),
      save: async (k, v) => void data.set(k, v),
      remove: async k => void data.delete(k)
    };
    const first = new St.PanelState(store);
    await first.restore();
    first.setModel('gpt-4o');
    await new Promise(r => setTimeout(r, 0));
    const reloaded = new St.PanelState(store);
    await reloaded.restore();
    assert.equal(reloaded.model, 'gpt-4o');
    reloaded.setModel(null);
    await new Promise(r => setTimeout(r, 0));
    assert.equal(data.has(St.StateKeys.model), false);
  });
});

describe('MCP servers in the health answer', () => {
  const health = {
    ok: true,
    provider: { name: 'scripted' },
    mcp: {
      time: { transport: 'stdio', command: 'mcp-server-time', state: 'ready', tools: ['get_current_time', 'convert_time'], starts: 1, error: null, stderr_tail: '' },
      broken: { transport: 'stdio', command: 'false', state: 'failed', tools: null, starts: 2, error: 'exited with 1', stderr_tail: '<script>alert(1)</script>\nboom' },
      remote: { transport: 'http', url: 'http://127.0.0.1:9/mcp', state: 'idle', tools: null, starts: 0, error: null, stderr_tail: '' },
      odd: 'junk'
    }
  };

  test('one row per server, by name, with its state and where it runs', () => {
    const rows = V.validateHealth(health).mcp;
    assert.deepEqual(rows.map(r => [r.name, r.state, r.transport, r.target]), [
      ['broken', 'failed', 'stdio', 'false'],
      ['remote', 'idle', 'http', 'http://127.0.0.1:9/mcp'],
      ['time', 'ready', 'stdio', 'mcp-server-time']
    ]);
    const [broken, remote, time] = rows;
    assert.equal(S.mcpSummary(time), 'ready · 2 tools');
    assert.equal(S.mcpSummary(broken), 'failed (restarts on its next call)');
    assert.equal(S.mcpSummary(remote), 'idle (starts on its first call)');
    assert.equal(broken.error, 'exited with 1');
    // kept as text: the view puts it in a <pre> as a text node
    assert.equal(broken.stderrTail, '<script>alert(1)</script>\nboom');
    assert.equal(broken.starts, 2);
  });

  test('a server without mcp (or another shape): no rows', () => {
    assert.deepEqual(V.validateHealth({ ok: true }).mcp, []);
    assert.deepEqual(V.validateHealth({ ok: true, mcp: [1] }).mcp, []);
    const odd = V.validateHealth({ mcp: { x: { state: 'exploded', tools: 'no' } } }).mcp[0];
    assert.equal(odd.state, 'idle');
    assert.equal(odd.tools, null);
  });
});
