// Issue 30.5 and 30.6, the panel's pure parts: `@names` that resolve to nothing, a provider
// error in plain words (once, with the setting to change), the provider's reachability, and
// footers and tool cards without the server's internal words.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { events as E, labels as L, mentions as M, plain as P, run as R, validate as V } from './load.mjs';

function fold(list) {
  const view = R.emptyRun(0);
  list.forEach(([type, data], i) =>
    R.applyEvent(view, E.validateEvent(String(i + 1), type, JSON.stringify({ run_id: 'run-1', ...data })), 9)
  );
  return view;
}

describe('@names that resolve to nothing', () => {
  test('the names not among the variables, once each, in order', () => {
    assert.deepEqual(M.unknownMentions('plot @df against @nosuch and @nosuch, @x2', ['df']), ['nosuch', 'x2']);
    assert.deepEqual(M.unknownMentions('mail me@host.org about @df', ['df']), []);
  });
  test('the note names them and the notebook, and says how to send anyway', () => {
    const note = M.unknownMentionsNote(['nosuch'], 'a.ipynb');
    assert.match(note, /@nosuch is not a variable in a\.ipynb's kernel/);
    assert.match(note, /Send again/);
  });
});

describe('a provider error, in plain words, once', () => {
  const message = 'cannot reach openai at http://127.0.0.1:9/v1/chat/completions: connection refused';
  const run = fold([
    ['run.started', { session_id: 's', model: 'm', budget: { rounds: 8 } }],
    ['run.error', { code: 'provider_unreachable', message }],
    ['run.error', { code: 'provider_unreachable', message }],
    [
      'run.completed',
      {
        reason: 'error',
        rounds: 1,
        summary: { text: `No answer (error) after 1 of 8 rounds. No tool calls. Last error: ${message} Fix the error above.` }
      }
    ]
  ]);
  const shown = P.plainErrors(run.errors);
  test('no code, the setting to change, shown once', () => {
    assert.deepEqual(shown, [`${message} (check c.Resolve.base_url)`]);
  });
  test('the summary does not repeat it', () => {
    const summary = P.summaryWithoutShownErrors(L.emptySummary(run), shown);
    assert.ok(!summary.includes('cannot reach'), summary);
    assert.match(summary, /No answer/);
  });
  test('a message that names its setting is left as it is', () => {
    assert.equal(P.runErrorLine('provider_auth', 'set c.Resolve.api_key_env'), 'set c.Resolve.api_key_env');
    assert.equal(P.runErrorLine(undefined, 'boom'), 'boom');
  });
});

describe('the provider in the Status tab', () => {
  const health = provider => V.validateHealth({ ok: true, provider: { name: 'openai', model: 'm', ...provider } });
  test('unreachable: why, and the setting to change', () => {
    const s = P.providerState(health({ reachable: false, error: 'connection refused', setting: 'c.Resolve.base_url', checked_at: 1 }));
    assert.equal(s.state, 'unreachable');
    assert.equal(s.text, 'unreachable: connection refused (change c.Resolve.base_url)');
  });
  test('reachable, and not checked from a server that does not say', () => {
    assert.equal(P.providerState(health({ reachable: true })).state, 'reachable');
    assert.equal(P.providerState(health({})).state, 'not checked');
  });
});

describe('words a person reads', () => {
  test('a finished run is done, not "stop"', () => {
    assert.equal(P.reasonLabel('stop'), 'done');
    assert.equal(P.reasonLabel('budget'), 'round budget used up');
  });
  test('the note for the model is dropped when the card shows the display', () => {
    const output = 'fig saved\n[shown to the person: image/png]';
    assert.equal(P.toolOutputText(output, true), 'fig saved');
    assert.equal(P.toolOutputText(output, false), output);
  });
});

describe('artifact rows (issue 30.4)', () => {
  const artifact = extra =>
    V.validateArtifact({
      id: 'art-0123456789abcdef01234567',
      media_type: 'image/png',
      title: 'BMI',
      created_by: '2177f83583fb4e9c8d2e5d566f4a1c88',
      created_at: '2026-12-01T16:30:00.000+00:00',
      source: { kind: 'notebook', notebook: 'a.ipynb', cell_id: 'c-1', output_index: 0, execution_count: 3 },
      ...extra
    });
  test('the person by name, not the login; local time, not the stored ISO text', () => {
    const meta = P.artifactMeta(artifact({ created_by_name: 'Ada Lovelace' }));
    assert.match(meta, /^Ada Lovelace · /);
    assert.ok(!meta.includes('2177f83583'), meta);
    assert.ok(!meta.includes('2026-12-01T16:30'), meta);
    assert.match(meta, /image\/png$/);
  });
  test('a notebook source opens its cell; a tool call names its run', () => {
    assert.deepEqual(P.artifactSource(artifact({})), { text: 'a.ipynb Out[3]', notebook: 'a.ipynb', cellId: 'c-1' });
    const tool = P.artifactSource(artifact({ source: { kind: 'tool', run_id: 'run-1', call_id: 'c' } }));
    assert.equal(tool.notebook, null);
    assert.match(tool.text, /run-1/);
  });
});
