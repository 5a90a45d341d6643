// Issue 17, the panel's pure parts: `@name` mentions, proposals folded from their events, the
// diff a proposed cell shows, where accepted cells go and what they carry.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  diff as D,
  events as E,
  labels as L,
  mentions as M,
  proposal as P,
  run as R,
  validate as V
} from './load.mjs';

const VARIABLES = [
  { name: 'df', type: 'DataFrame', shape: [3, 2], summary: 'columns: a, b' },
  { name: 'data_raw', type: 'list', shape: null, summary: 'len 4' },
  { name: 'model', type: 'LinearRegression', shape: null, summary: '' },
  { name: 'odd', type: 'ndarray', shape: [5], summary: '' }
];

/** Events as a run log holds them, through the shape check every server event passes. */
function fold(events) {
  const view = R.emptyRun(0);
  events.forEach(([type, data], i) =>
    R.applyEvent(view, E.validateEvent(String(i + 1), type, JSON.stringify({ run_id: 'run-1', ...data })), 9)
  );
  return view;
}

const PROPOSAL = {
  call_id: 'call_1',
  proposal_id: 'prop-1',
  notebook: 'work/analysis.ipynb',
  cells: [{ cell_type: 'code', source: 'df.describe()\n' }],
  after_cell_id: 'cell-a',
  note: 'summarize the frame'
};

describe('@name mentions', () => {
  test('the mention the caret is in, and what is not one', () => {
    assert.deepEqual(M.mentionAt('look at @d', 10), { start: 8, query: 'd' });
    assert.deepEqual(M.mentionAt('@', 1), { start: 0, query: '' });
    assert.deepEqual(M.mentionAt('(@df', 4), { start: 1, query: 'df' });
    assert.equal(M.mentionAt('me@host', 7), null, 'an e-mail address');
    assert.equal(M.mentionAt('x.@y', 4), null);
    assert.equal(M.mentionAt('@df and more', 12), null, 'the caret past the word');
    assert.equal(M.mentionAt('@1x', 3), null, 'not an identifier');
    // the caret in the middle of a word: what is before it is the query
    assert.deepEqual(M.mentionAt('@data_raw', 3), { start: 0, query: 'da' });
  });

  test('names starting with the query first, then containing it, any case', () => {
    assert.deepEqual(M.matchVariables(VARIABLES, 'd').map(v => v.name), ['df', 'data_raw', 'model', 'odd']);
    assert.deepEqual(M.matchVariables(VARIABLES, 'D').map(v => v.name)[0], 'df');
    assert.deepEqual(M.matchVariables(VARIABLES, 'raw').map(v => v.name), ['data_raw']);
    assert.deepEqual(M.matchVariables(VARIABLES, '').length, 4);
    assert.deepEqual(M.matchVariables(VARIABLES, 'd', 2).length, 2);
  });

  test('picking a name completes the word and puts the caret after it', () => {
    const text = 'plot @d please';
    const at = M.mentionAt(text, 7);
    assert.deepEqual(M.completeMention(text, 7, at, 'df'), { text: 'plot @df please', caret: 8 });
    const end = M.completeMention('show @', 6, M.mentionAt('show @', 6), 'odd');
    assert.deepEqual(end, { text: 'show @odd ', caret: 10 });
    // the caret inside a word: the whole word is replaced
    const mid = M.completeMention('@data_r x', 3, M.mentionAt('@data_r x', 3), 'data_raw');
    assert.equal(mid.text, '@data_raw x');
  });

  test('a message mentions the known names it names, once each', () => {
    const known = VARIABLES.map(v => v.name);
    assert.deepEqual(M.mentionedNames('Compare @df with @odd, then @df again; mail me@df.org', known), ['df', 'odd']);
    assert.deepEqual(M.mentionedNames('@unknown and @model.', known), ['model']);
    assert.deepEqual(M.mentionedNames('no mentions', known), []);
  });

  test('the completion shows type and shape', () => {
    assert.equal(M.variableHint(VARIABLES[0]), 'DataFrame (3, 2)');
    assert.equal(M.variableHint(VARIABLES[3]), 'ndarray (5,)');
    assert.equal(M.variableHint(VARIABLES[1]), 'list');
  });

  test('run.started carries what the model was told about each mention', () => {
    const view = fold([
      ['run.started', { session_id: 's', prompt: 'describe @df', mentions: [{ name: 'df', description: 'DataFrame 3×2\ncolumns: a, b' }, { bad: 1 }] }]
    ]);
    assert.deepEqual(view.mentions, [{ name: 'df', description: 'DataFrame 3×2\ncolumns: a, b' }]);
  });

  test('the variables answer is checked', () => {
    const ok = V.validateVariables({ notebook: 'a.ipynb', kernel: true, variables: [...VARIABLES, { type: 'x' }] });
    assert.equal(ok.kernel, true);
    assert.deepEqual(ok.variables.map(v => v.name), ['df', 'data_raw', 'model', 'odd']);
    assert.deepEqual(ok.variables[0].shape, [3, 2]);
    assert.deepEqual(V.validateVariables({ notebook: 'a.ipynb', kernel: false, variables: [] }).variables, []);
    assert.throws(() => V.validateVariables({ kernel: true }), V.ShapeError);
  });
});

describe('proposals folded from notebook.proposal and notebook.decision', () => {
  test('a proposal waits in its call card, then is accepted (edited, ran)', () => {
    const view = fold([
      ['run.started', { session_id: 's', prompt: 'add a summary cell' }],
      ['tool.requested', { call_id: 'call_1', name: 'notebook_propose', arguments: {} }],
      ['tool.started', { call_id: 'call_1', name: 'notebook_propose' }],
      ['notebook.proposal', PROPOSAL]
    ]);
    assert.deepEqual(view.parts, [{ kind: 'tool', callId: 'call_1' }], 'no card of its own: it lives in the call');
    assert.equal(view.tools.call_1.proposalId, 'prop-1');
    const p = view.proposals['prop-1'];
    assert.equal(p.status, 'waiting');
    assert.equal(p.notebook, 'work/analysis.ipynb');
    assert.equal(p.afterCellId, 'cell-a');
    assert.equal(p.replaceCellId, null);
    assert.equal(p.note, 'summarize the frame');
    assert.deepEqual(R.waitingProposals(view).map(w => w.proposalId), ['prop-1']);
    assert.equal(L.decisionLabel(p), 'waiting for your review');
    // the call waits for a person, as an approval does
    assert.equal(view.tools.call_1.status, 'waiting');
    R.applyEvent(view, E.validateEvent('9', 'notebook.decision', JSON.stringify({
      run_id: 'run-1', proposal_id: 'prop-1', decision: 'accepted', edited: true, ran: true, by: 'person'
    })));
    assert.equal(p.status, 'accepted');
    assert.equal(L.decisionLabel(p), 'accepted (edited, ran)');
    assert.deepEqual(R.waitingProposals(view), []);
    assert.equal(view.tools.call_1.status, 'approved');
    R.applyEvent(view, E.validateEvent('10', 'tool.completed', JSON.stringify({
      run_id: 'run-1', call_id: 'call_1', name: 'notebook_propose', ok: true, output: 'accepted'
    })));
    assert.equal(view.tools.call_1.status, 'done');
  });

  test('a rejection keeps its reason; a timeout says so', () => {
    const view = fold([
      ['run.started', { session_id: 's' }],
      ['notebook.proposal', PROPOSAL],
      ['notebook.decision', { proposal_id: 'prop-1', decision: 'rejected', edited: false, ran: false, by: 'person', reason: 'use seaborn' }],
      ['notebook.proposal', { ...PROPOSAL, call_id: 'call_2', proposal_id: 'prop-2' }],
      ['notebook.decision', { proposal_id: 'prop-2', decision: 'rejected', edited: false, ran: false, by: 'timeout' }]
    ]);
    assert.equal(L.decisionLabel(view.proposals['prop-1']), 'rejected: use seaborn');
    // a rejected call is denied, and its (failed) result keeps it so
    assert.equal(view.tools.call_1.status, 'denied');
    R.applyEvent(view, E.validateEvent('10', 'tool.completed', JSON.stringify({
      run_id: 'run-1', call_id: 'call_1', name: 'notebook_propose', ok: false, output: 'rejected'
    })));
    assert.equal(view.tools.call_1.status, 'denied');
    assert.equal(L.decisionLabel(view.proposals['prop-2']), 'rejected (timed out)');
    // a proposal arriving without its tool.requested still gets its call card
    assert.equal(view.tools.call_2.name, 'notebook_propose');
  });

  test('a proposal left waiting when its run ends is closed', () => {
    const view = fold([
      ['run.started', { session_id: 's' }],
      ['tool.started', { call_id: 'call_1', name: 'notebook_propose' }],
      ['notebook.proposal', PROPOSAL],
      ['run.completed', { reason: 'cancelled', rounds: 1 }]
    ]);
    assert.equal(view.tools.call_1.status, 'cancelled');
    assert.equal(view.proposals['prop-1'].status, 'closed');
    assert.match(L.decisionLabel(view.proposals['prop-1']), /closed/);
  });

  test('proposal shapes are checked where they enter', () => {
    const frame = data => JSON.stringify({ run_id: 'r', call_id: 'c', proposal_id: 'p', notebook: 'n.ipynb', ...data });
    // nbformat's list-of-lines source is joined
    const ok = E.validateEvent('1', 'notebook.proposal', frame({ cells: [{ cell_type: 'markdown', source: ['# a\n', 'b'] }], replace_cell_id: 'x', replaced_source: ['old'] }));
    assert.deepEqual(ok.data.cells, [{ cell_type: 'markdown', source: '# a\nb' }]);
    assert.equal(ok.data.replaced_source, 'old');
    assert.equal(ok.data.after_cell_id, null);
    assert.throws(() => E.validateEvent('1', 'notebook.proposal', frame({ cells: [] })), V.ShapeError);
    assert.throws(() => E.validateEvent('1', 'notebook.proposal', frame({ cells: [{ cell_type: 'html', source: 'x' }] })), V.ShapeError);
    assert.throws(() => E.validateEvent('1', 'notebook.proposal', frame({ cells: [{ cell_type: 'code', source: 3 }] })), V.ShapeError);
    assert.throws(() => E.validateEvent('1', 'notebook.proposal', JSON.stringify({ run_id: 'r', call_id: 'c', proposal_id: 'p', cells: [] })), /missing notebook/);
    assert.throws(() => E.validateEvent('1', 'notebook.decision', JSON.stringify({ run_id: 'r', proposal_id: 'p', decision: 'maybe' })), V.ShapeError);
  });

  test('the decision answer is checked', () => {
    const a = V.validateProposalAnswer({
      proposal_id: 'p', decision: 'accepted', edited: false, ran: true,
      outputs: [[{ output_type: 'stream', name: 'stdout', text: '42\n' }, { nope: 1 }]], execution_counts: [7]
    });
    assert.deepEqual(a.outputs, [[{ output_type: 'stream', name: 'stdout', text: '42\n' }]]);
    assert.deepEqual(a.execution_counts, [7]);
    const r = V.validateProposalAnswer({ proposal_id: 'p', decision: 'rejected', edited: false, ran: false, outputs: null, execution_counts: null });
    assert.equal(r.outputs, null);
    assert.throws(() => V.validateProposalAnswer({ proposal_id: 'p', decision: 'accept' }), V.ShapeError);
  });
});

describe('the diff of a proposed cell', () => {
  test('kept, removed and added lines, in order', () => {
    assert.deepEqual(D.lineDiff('a\nb\nc\n', 'a\nB\nc\nd\n'), [
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'B' },
      { op: ' ', text: 'c' },
      { op: '+', text: 'd' }
    ]);
    assert.equal(D.diffText(D.lineDiff('x = 1', 'x = 2')), '- x = 1\n+ x = 2');
  });

  test('a new cell is all added; identical sources are all kept', () => {
    assert.deepEqual(D.lineDiff('', 'a\nb').map(l => l.op), ['+', '+']);
    assert.deepEqual(D.lineDiff('a\nb', 'a\nb').map(l => l.op), [' ', ' ']);
    assert.deepEqual(D.lineDiff('', ''), []);
  });

  test('sources too large to align are shown removed then added', () => {
    const big = n => Array.from({ length: n }, (_, i) => `line ${i}`).join('\n');
    const rows = D.lineDiff(big(1200), big(1000));
    assert.equal(rows.length, 2200);
    assert.equal(rows[0].op, '-');
    assert.equal(rows[1200].op, '+');
  });

  test('the first cell of a replacement diffs against the live source, else the saved one', () => {
    const view = fold([
      ['run.started', { session_id: 's' }],
      ['notebook.proposal', { ...PROPOSAL, after_cell_id: null, replace_cell_id: 'cell-b', replaced_source: 'saved', cells: [{ cell_type: 'code', source: 'new' }, { cell_type: 'markdown', source: 'm' }] }]
    ]);
    const p = view.proposals['prop-1'];
    assert.deepEqual(P.diffBases(p, 'live edit'), ['live edit', null]);
    assert.deepEqual(P.diffBases(p, null), ['saved', null]);
    assert.deepEqual(P.diffBases({ ...p, replaceCellId: null }, 'live edit'), [null, null]);
  });
});

describe('accepted cells', () => {
  const ids = ['cell-a', 'cell-b', 'cell-c'];

  test('go after after_cell_id, in place of replace_cell_id, else at the end', () => {
    assert.deepEqual(P.placement(ids, { afterCellId: 'cell-a', replaceCellId: null }), { index: 1, replace: false, missing: null });
    assert.deepEqual(P.placement(ids, { afterCellId: 'cell-c', replaceCellId: null }), { index: 3, replace: false, missing: null });
    assert.deepEqual(P.placement(ids, { afterCellId: null, replaceCellId: 'cell-b' }), { index: 1, replace: true, missing: null });
    assert.deepEqual(P.placement(ids, { afterCellId: null, replaceCellId: null }), { index: 3, replace: false, missing: null });
    // a cell the person deleted meanwhile: at the end, and the panel says so
    assert.deepEqual(P.placement(ids, { afterCellId: 'gone', replaceCellId: null }), { index: 3, replace: false, missing: 'gone' });
    assert.deepEqual(P.placement(ids, { afterCellId: null, replaceCellId: 'gone' }), { index: 3, replace: false, missing: 'gone' });
  });

  test('carry metadata.resolve, and the outputs of the cells the server ran', () => {
    const meta = { run_id: 'run-1', call_id: 'call_1', proposal_id: 'prop-1' };
    const out = [{ output_type: 'stream', name: 'stdout', text: '42\n' }];
    const cells = P.acceptedCells(
      [{ cell_type: 'markdown', source: '# Summary' }, { cell_type: 'code', source: 'print(42)' }],
      meta,
      [[], out],
      [null, 5]
    );
    assert.deepEqual(cells, [
      { cell_type: 'markdown', source: '# Summary', metadata: { resolve: meta } },
      { cell_type: 'code', source: 'print(42)', metadata: { resolve: meta }, outputs: out, execution_count: 5 }
    ]);
    // not run: code cells start empty
    assert.deepEqual(P.acceptedCells([{ cell_type: 'code', source: 'x' }], meta)[0], {
      cell_type: 'code', source: 'x', metadata: { resolve: meta }, outputs: [], execution_count: null
    });
  });
});
