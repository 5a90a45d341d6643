// Issue 37, the panel's part: the settings an administrator locked (health `locked`) and the
// person's own usage (`GET resolve/api/usage`), read where they enter and put in words.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hub as H, validate as V } from './load.mjs';

describe('health.locked', () => {
  test('read from health; a locked setting says so, with its value', () => {
    const health = V.validateHealth({ ok: true, provider: { name: 'hub' }, locked: { model: 'gpt-4o-mini', max_rounds: 4 } });
    assert.deepEqual(health.locked, { model: 'gpt-4o-mini', max_rounds: 4 });
    assert.equal(H.lockedTitle(health.locked, 'model'), 'set by the administrator (c.Resolve.model = "gpt-4o-mini")');
    assert.equal(H.lockedTitle(health.locked, 'max_rounds'), 'set by the administrator (c.Resolve.max_rounds = 4)');
    assert.equal(H.lockedTitle(health.locked, 'provider'), null, 'not locked');
  });

  test('nothing locked, an older server or another shape: {}; a long or hidden value is not repeated', () => {
    for (const locked of [undefined, null, [], 'model', 3]) {
      assert.deepEqual(V.validateHealth({ ok: true, locked }).locked, {});
    }
    assert.equal(H.lockedTitle(null, 'model'), null);
    assert.equal(H.lockedTitle({ allowed_tools: 'x'.repeat(200) }, 'allowed_tools'), 'set by the administrator (c.Resolve.allowed_tools)');
    assert.equal(H.lockedTitle({ api_key_env: '(set)' }, 'api_key_env'), 'set by the administrator (c.Resolve.api_key_env = "(set)")');
    assert.equal(H.lockedTitle({ toString: 1 }, 'hasOwnProperty'), null);
  });
});

describe('GET resolve/api/usage', () => {
  const day = { tokens: 1200, cost: 0.0123, limit_tokens: 100000, limit_cost: 1, resets_at: '2026-12-02T00:00:00Z' };
  const month = { tokens: 54321, cost: 0.5, limit_tokens: null, limit_cost: null, resets_at: '2027-01-01T00:00:00Z' };

  test('read: the day and the month with their limits; the Status lines', () => {
    const usage = H.validateUsage({ provider: 'hub', user: 'ada', day, month });
    assert.deepEqual(usage.day, { tokens: 1200, cost: 0.0123, limitTokens: 100000, limitCost: 1, resetsAt: '2026-12-02T00:00:00Z' });
    assert.equal(usage.user, 'ada');
    assert.deepEqual(H.usageLines(usage), [
      'today: 1,200 of 100,000 tokens · $0.01 of $1.00 · resets 2026-12-02T00:00:00Z',
      'this month: 54,321 tokens · $0.50'
    ]);
  });

  test('day null (not the hub provider): nothing shown', () => {
    const usage = H.validateUsage({ provider: 'openai', user: null, day: null, month: null });
    assert.equal(usage.day, null);
    assert.equal(usage.month, null);
    assert.deepEqual(H.usageLines(usage), []);
    assert.deepEqual(H.usageLines(null), []);
  });

  test('odd fields fall back; epoch resets read as a time; another shape is an error', () => {
    const usage = H.validateUsage({ provider: 7, day: { tokens: -3, cost: 'x', limit_tokens: 'y', resets_at: 0 } });
    assert.deepEqual(usage, {
      provider: '',
      user: null,
      day: { tokens: 0, cost: 0, limitTokens: null, limitCost: null, resetsAt: '1970-01-01T00:00:00.000Z' },
      month: null
    });
    assert.deepEqual(H.usageLines(usage), ['today: 0 tokens · $0.00']);
    for (const bad of [null, [], 'usage']) {
      assert.throws(() => H.validateUsage(bad), /usage: expected/);
    }
  });
});
