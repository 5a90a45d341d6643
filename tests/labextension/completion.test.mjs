// Inline completion context (issue 35.3): the cells above are the prefix, the cells below the
// suffix, Markdown as comments, magic lines and %resolve left out, both ends bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completionContext as C, completionPending as P, completionSettings as S } from './load.mjs';

const code = source => ({ type: 'code', source });
const md = source => ({ type: 'markdown', source });

test('cells above are the prefix and cells below the suffix, Markdown as comments', () => {
  const cells = [md('# Load\nthe data'), code('import pandas as pd'), code('df = pd.'), code('df.head()')];
  const out = C.buildContext({ cells, active: 2, offset: 'df = pd.'.length, language: 'python' });
  assert.equal(out.prefix, '# # Load\n# the data\n\nimport pandas as pd\n\ndf = pd.');
  assert.equal(out.suffix, '\n\ndf.head()');
});

test('the cursor in the middle of a cell splits it', () => {
  const out = C.buildContext({ cells: [code('x = 1\ny = \nz = 3')], active: 0, offset: 10, language: 'python' });
  assert.equal(out.prefix, 'x = 1\ny = ');
  assert.equal(out.suffix, '\nz = 3');
});

test('Markdown takes the language comment marker', () => {
  const out = C.buildContext({ cells: [md('Notes'), code('')], active: 1, offset: 0, language: 'javascript' });
  assert.equal(out.prefix, '// Notes\n\n');
  const r = C.buildContext({ cells: [md('Notes'), code('')], active: 1, offset: 0, language: 'R' });
  assert.equal(r.prefix, '# Notes\n\n');
});

test('magic lines, %resolve and cell magics stay out of the context', () => {
  const cells = [
    code('%load_ext jupyter_resolve\nimport numpy as np'),
    code('%%time\nslow()'),
    code('%resolve plot the data\n!pip list\nimport '),
    code('%resolve explain\nprint(np.pi)')
  ];
  const active = 2;
  const out = C.buildContext({ cells, active, offset: cells[active].source.length, language: 'python' });
  assert.equal(out.prefix, 'import numpy as np\n\nimport ');
  assert.equal(out.suffix, '\n\nprint(np.pi)');
  assert.ok(!out.prefix.includes('%') && !out.suffix.includes('%'));
});

test('the cursor on a magic line or in a cell magic completes nothing', () => {
  assert.equal(C.buildContext({ cells: [code('%resolve summar')], active: 0, offset: 15, language: 'python' }), null);
  assert.equal(C.buildContext({ cells: [code('!pip inst')], active: 0, offset: 9, language: 'python' }), null);
  assert.equal(C.buildContext({ cells: [code('%%bash\nls -')], active: 0, offset: 11, language: 'python' }), null);
  assert.notEqual(C.buildContext({ cells: [code('x = 5 % 3\ny')], active: 0, offset: 11, language: 'python' }), null);
});

test('prefix and suffix are bounded, cut at line boundaries near the cursor', () => {
  const above = Array.from({ length: 200 }, (_, i) => `a${i} = ${i}`).join('\n');
  const below = Array.from({ length: 200 }, (_, i) => `b${i} = ${i}`).join('\n');
  const cells = [code(above), code('z = '), code(below)];
  const out = C.buildContext({ cells, active: 1, offset: 4, language: 'python' }, 100, 50);
  assert.ok(out.prefix.length <= 100 && out.prefix.endsWith('\n\nz = '));
  assert.match(out.prefix, /^a\d+ = \d+\n/); // whole lines only
  assert.ok(out.suffix.length <= 50 && out.suffix.startsWith('\n\nb0 = 0'));
  assert.match(out.suffix, /b\d+ = \d+$/);
});

test('settings: defaults, ill-typed fields, disabled languages', () => {
  assert.deepEqual(S.parseCompletionSettings(undefined), S.DEFAULT_COMPLETION_SETTINGS);
  const s = S.parseCompletionSettings({ enabled: 'yes', debounce: -1, timeout: 500, disabledLanguages: [' Python ', 3], model: 'm' });
  assert.equal(s.enabled, true);
  assert.equal(s.debounce, 250);
  assert.equal(s.timeout, 500);
  assert.deepEqual(s.disabledLanguages, ['python']);
  assert.equal(S.languageEnabled(s, 'python'), false);
  assert.equal(S.languageEnabled(s, 'r'), true);
  assert.equal(S.languageEnabled({ ...s, enabled: false }, 'r'), false);
});

test('the language of an editor MIME type', () => {
  assert.equal(C.languageOfMime('text/x-ipython'), 'python');
  assert.equal(C.languageOfMime('text/x-rsrc'), 'rsrc');
  assert.equal(C.languageOfMime('text/javascript'), 'javascript');
  assert.equal(C.languageOfMime(undefined), 'text');
});

test('a streamed completion: the first text is incomplete, each change is yielded, none missed', async () => {
  const { PendingCompletion } = P;
  const pending = new PendingCompletion();
  const first = pending.changed(0);
  pending.append('numpy');
  await first;
  assert.deepEqual(pending.item('t'), { insertText: 'numpy', token: 't', isIncomplete: true });
  const seen = [];
  const reading = (async () => {
    for await (const item of pending.updates('t')) seen.push(item);
  })();
  pending.append(' as');
  // two changes while the reader is not waiting: the last state still comes through
  pending.append(' np');
  pending.finish();
  await reading;
  assert.deepEqual(seen.at(-1), { insertText: 'numpy as np', token: 't', isIncomplete: false });
  assert.ok(seen.every((item, i) => i === seen.length - 1 || item.isIncomplete));
});

test('a failed completion ends the stream with the error on the item', async () => {
  const pending = new P.PendingCompletion();
  pending.append('par');
  const seen = [];
  const reading = (async () => {
    for await (const item of pending.updates('t')) seen.push(item);
  })();
  pending.fail('Resolve: no completion within 100 ms');
  await reading;
  assert.deepEqual(seen.at(-1), {
    insertText: 'par',
    token: 't',
    isIncomplete: false,
    error: { message: 'Resolve: no completion within 100 ms' }
  });
});

test('completion stream frames: deltas, done, an error frame, unknown frames ignored', () => {
  const got = [];
  const callbacks = { onDelta: t => got.push(['delta', t]), onDone: info => got.push(['done', info]) };
  assert.equal(P.onCompletionFrame('completion.delta', '{"text":"numpy"}', callbacks), false);
  assert.equal(P.onCompletionFrame('completion.later', '{}', callbacks), false);
  assert.equal(P.onCompletionFrame('completion.done', '{"model":"m","ms":3.5,"usage":null}', callbacks), true);
  assert.deepEqual(got, [['delta', 'numpy'], ['done', { model: 'm', ms: 3.5 }]]);
  assert.throws(() => P.onCompletionFrame('error', '{"code":"provider_error","message":"down"}', callbacks), {
    name: 'CompletionStreamError',
    message: 'down'
  });
  assert.throws(() => P.onCompletionFrame('completion.delta', 'not json', callbacks), /not JSON/);
});
