// Issue 34, the panel's part: `provider.local` of `GET resolve/api/health` (the llama.cpp server
// the gateway runs) is read where it enters and named in the header (file, size, context, state).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status as S, validate as V } from './load.mjs';

// as jupyter_resolve/providers/local_server.py describes it
const LOCAL = {
  model_file: '/home/me/.cache/jupyter-resolve/qwen2.5-0.5b-instruct-q4_k_m.gguf',
  size_bytes: 491_400_032,
  context: 8192,
  threads: 2,
  state: 'ready',
  pid: 4242,
  starts: 1,
  prompt_tokens_evaluated: 10,
  prompt_tokens_sent: 12,
  tokens_generated: 3
};
const health = local => ({ ok: true, provider: { name: 'local', model: 'local', local } });

describe('provider.local in health', () => {
  test('read: file, size, context, state, starts; the header line', () => {
    const h = V.validateHealth(health(LOCAL));
    assert.deepEqual(h.local, {
      modelFile: LOCAL.model_file,
      sizeBytes: 491_400_032,
      context: 8192,
      state: 'ready',
      starts: 1,
      error: null
    });
    assert.equal(S.localSummary(h.local), 'qwen2.5-0.5b-instruct-q4_k_m.gguf · 469 MB · 8,192 tokens · ready');
  });

  test('a missing GGUF: no size, the error kept as text, failed', () => {
    const local = { ...LOCAL, size_bytes: null, state: 'failed', pid: null, error: 'no GGUF at /x.gguf (c.Resolve.local_model)' };
    const h = V.validateHealth(health(local));
    assert.equal(h.local.sizeBytes, null);
    assert.equal(h.local.error, local.error);
    assert.equal(S.localSummary(h.local), 'qwen2.5-0.5b-instruct-q4_k_m.gguf · file missing · 8,192 tokens · failed');
  });

  test('another provider, or another shape: none; odd fields fall back', () => {
    assert.equal(V.validateHealth({ ok: true, provider: { name: 'openai' } }).local, null);
    assert.equal(V.validateHealth(health('ready')).local, null);
    const odd = V.validateHealth(health({ state: 'exploded', size_bytes: -1, context: 'big', model_file: 7 })).local;
    assert.deepEqual(odd, { modelFile: '', sizeBytes: null, context: null, state: 'idle', starts: 0, error: null });
    assert.equal(S.localSummary(odd), 'no model file · file missing · idle (starts on first use)');
    assert.equal(S.byteSize(512), '512 bytes');
    assert.equal(S.byteSize(1536), '1.5 KB');
  });
});
