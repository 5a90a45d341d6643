// The MCP tokens' answers (labextension/src/listings.ts), checked where they enter the panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listings as L } from './load.mjs';

test('validateMcpTokens: rows with ids; a token value is never part of the listing', () => {
  const body = {
    tokens: [
      { id: 'a1', name: 'my editor', created: 1700000000 },
      { id: 'b2', created: 'yesterday', token: 'resolve-mcp-secret' },
      { name: 'no id' },
      null
    ]
  };
  assert.deepEqual(L.validateMcpTokens(body), [
    { id: 'a1', name: 'my editor', created: 1700000000 },
    { id: 'b2', name: '', created: 0 }
  ]);
  assert.throws(() => L.validateMcpTokens({ token: [] }), /mcp-tokens/);
});

test('validateNewMcpToken: the value and its listing, or a shape error', () => {
  const made = L.validateNewMcpToken({ token: 'resolve-mcp-x', id: 'a1', name: 'mcp client', created: 5 });
  assert.deepEqual(made, { id: 'a1', name: 'mcp client', created: 5, token: 'resolve-mcp-x' });
  assert.throws(() => L.validateNewMcpToken({ id: 'a1', name: 'x', created: 5 }), /token/);
  assert.throws(() => L.validateNewMcpToken({ token: 'resolve-mcp-x' }), /token/);
});
