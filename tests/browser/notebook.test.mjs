// The panel with the person's notebook (issue 17), in a real JupyterLab (login and XSRF on) with
// a recording fake model provider: `@df` puts the frame's shape and columns into the model's
// request; a proposed cell shows as a diff; Accept puts it into the open notebook below its
// target with metadata.resolve, keeping an unsaved edit elsewhere; Accept and run returns its
// output to the model; Reject leaves the notebook as it was and the model is told why.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, openPanel, shot, waitForLab, waitForSavedState } from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

const NB = 'analysis.ipynb';
const code = (id, source) => ({ cell_type: 'code', id, execution_count: null, metadata: {}, source, outputs: [] });
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    code('cell-df', 'import pandas\ndf = pandas.DataFrame({"height": [1.5, 1.7, 1.8], "weight": [50, 65, 80]})'),
    code('cell-b', 'print("second")'),
    code('cell-c', 'x = 1')
  ]
});

const BMI = "df['bmi'] = (df.weight / df.height ** 2).round(1)";
const TOTAL = 'print(int(df.weight.sum()))';
const PAYLOAD = '<img src=x onerror="top.__resolve_pwned=1">a heading';

/** The model: proposes per the person's request, then says it is done once told the result. */
function reply(body) {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return { content: 'Noted.' };
  const asked = textOf([...messages].reverse().find(m => m.role === 'user'));
  const propose = args => ({ content: 'Here is a cell.', tool_calls: [{ name: 'notebook_propose', arguments: { notebook: NB, ...args } }] });
  if (asked.includes('BMI')) {
    return propose({ cells: [{ cell_type: 'code', source: BMI }], after_cell_id: 'cell-df', note: 'adds a BMI column' });
  }
  if (asked.includes('total weight')) {
    return propose({ cells: [{ cell_type: 'code', source: TOTAL }], after_cell_id: 'cell-b' });
  }
  if (asked.includes('heading')) {
    // a note a prompt-injected model might write: shown as text, never run
    return propose({ cells: [{ cell_type: 'markdown', source: '# Analysis' }], note: PAYLOAD });
  }
  if (asked.includes('second cell')) {
    return propose({ cells: [{ cell_type: 'code', source: 'print("third")' }], replace_cell_id: 'cell-b' });
  }
  return { content: 'I see it.' };
}

const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

/** The request the model got for the turn that asked `prompt`, and the ones after it. */
function requestsAfter(prompt) {
  const i = fake.requests.findIndex(body => textOf(body.messages.filter(m => m.role === 'user').at(-1)).includes(prompt));
  assert.ok(i >= 0, `the model was asked ${JSON.stringify(prompt)}`);
  return fake.requests.slice(i);
}

/** The tool result the model got for its notebook_propose call after `prompt`. */
function toolResultAfter(prompt) {
  const next = requestsAfter(prompt).find(body => body.messages.at(-1)?.role === 'tool');
  assert.ok(next, 'the model got the tool result');
  return textOf(next.messages.at(-1));
}

async function answered(panel) {
  await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
}

/** Type into the message box and send with Enter. */
async function sendText(page, text) {
  const input = page.locator('#jp-resolve-panel textarea.jp-resolve-input');
  await input.click();
  await page.keyboard.type(text);
  assert.equal(await input.inputValue(), text);
  await page.keyboard.press('Enter');
}

/** The proposal card of the turn that asked `prompt`. */
async function proposalOf(panel, prompt) {
  await panel.locator('.jp-resolve-user', { hasText: prompt }).waitFor();
  const card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-proposal');
  await card.waitFor({ timeout: 120_000 });
  return card;
}

/** The sources of the notebook's cells as the page shows them. */
function cellSources(page) {
  return page.locator('.jp-NotebookPanel .jp-Cell .jp-InputArea-editor .cm-content').allInnerTexts();
}

describe('the panel and your notebook', { timeout: 900_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    files: { [NB]: NOTEBOOK },
    config: serverConfigFor(fake)
  });

  before(async () => {
    // the notebook open, its kernel has run every cell
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await page.locator('.jp-StatusBar-TextItem', { hasText: /Python 3.*\| Idle/ }).waitFor();
    await dismissToasts(page);
    await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).click();
    await page.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.jp-NotebookPanel .jp-Cell .jp-InputPrompt')].every(p => /\[\d+\]/.test(p.textContent))
    );
  });

  test('"Ask Resolve about this notebook" binds the chat; @df tells the model its shape and columns', async () => {
    const { page } = suite.session;
    await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-bound', { hasText: NB }).waitFor();
    // completion of the kernel's names while typing, picked with the keyboard
    const input = panel.locator('textarea.jp-resolve-input');
    await input.click();
    await page.keyboard.type('Describe @d');
    const option = panel.locator('.jp-resolve-mention-option', { hasText: '@df' });
    await option.waitFor();
    assert.match(await option.innerText(), /DataFrame/);
    await shot(panel, 'notebook-mention-completion');
    await page.keyboard.press('Enter');
    assert.equal(await input.inputValue(), 'Describe @df ');
    await page.keyboard.type('briefly');
    await page.keyboard.press('Enter');
    await answered(panel);

    const [request] = requestsAfter('Describe @df briefly');
    const told = textOf(request.messages.filter(m => m.role === 'user').at(-1));
    assert.match(told, /height/);
    assert.match(told, /weight/);
    assert.match(told, /\(3, 2\)|\[3, 2\]|3 rows|3 ×|3x2|3 x 2/, told);
    // the turn shows, collapsed, what the model was told
    const mentions = panel.locator('.jp-resolve-user').last().locator('details.jp-resolve-mentions');
    assert.match(await mentions.locator('summary').innerText(), /@df/);
    assert.equal(await mentions.evaluate(d => d.open), false);
    await mentions.locator('summary').click();
    assert.match(await mentions.locator('pre.jp-resolve-mention').innerText(), /height/);

    // the mouse picks too; Escape closes the list and leaves the text as typed
    await input.click();
    await page.keyboard.type('and @');
    await panel.locator('.jp-resolve-mention-option', { hasText: '@df' }).click();
    assert.equal(await input.inputValue(), 'and @df ');
    await page.keyboard.type('@w');
    await panel.locator('.jp-resolve-mention-popup').waitFor();
    await page.keyboard.press('Escape');
    await panel.locator('.jp-resolve-mention-popup').waitFor({ state: 'detached' });
    assert.equal(await input.inputValue(), 'and @df @w');
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Backspace');
  });

  test('a proposal shows a diff; Accept puts it below its target, unsaved edits kept', async () => {
    const { page } = suite.session;
    // an unsaved edit elsewhere in the notebook
    await page.locator('.jp-NotebookPanel .jp-Cell').nth(2).locator('.cm-content').click();
    await page.keyboard.press('Control+a');
    await page.keyboard.type('x = 2');
    await page.keyboard.press('Escape');
    const panel = await openPanel(page);
    await sendText(page, 'Add a BMI column');
    const card = await proposalOf(panel, 'Add a BMI column');
    assert.equal(await card.locator('.jp-resolve-proposal-cell').getAttribute('data-kind'), 'new');
    assert.equal(await card.locator('.jp-resolve-diff-add').innerText(), `+${BMI}`);
    assert.match(await card.locator('.jp-resolve-proposal-note').innerText(), /adds a BMI column/);
    await shot(card, 'notebook-proposal-new');
    await card.locator('button.jp-resolve-accept').click();
    await card.locator('.jp-resolve-proposal-status', { hasText: /^accepted$/ }).waitFor();
    await answered(panel);
    assert.match(toolResultAfter('Add a BMI column'), /accept/i);

    // in the open notebook, below cell-df, and the edit of cell-c still there (unsaved)
    assert.deepEqual((await cellSources(page)).slice(0, 4).map(s => s.split('\n')[0]), [
      'import pandas', BMI, 'print("second")', 'x = 2'
    ]);
    await page.locator('.jp-NotebookPanel .jp-Cell').nth(1).click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => !document.querySelector('.jp-mod-current.jp-mod-dirty'));
    let nb = null;
    for (let i = 0; i < 50 && !(nb?.cells?.length >= 4); i++) {
      if (i) await new Promise(r => setTimeout(r, 200));
      const answer = await suite.lab.api(`api/contents/${NB}?content=1`);
      nb = answer.ok ? (await answer.json()).content : null;
    }
    assert.ok(nb, 'the saved notebook');
    assert.deepEqual(nb.cells.map(c => c.id).filter(id => id.startsWith('cell-')), ['cell-df', 'cell-b', 'cell-c']);
    assert.equal(nb.cells[0].id, 'cell-df');
    assert.equal(nb.cells[1].source, BMI);
    // who wrote it (contracts/authorship.py's schema, issue 49.3)
    const meta = nb.cells[1].metadata.resolve;
    for (const key of ['authorship', 'run_id', 'call_id', 'proposal_id', 'model', 'accepted_by',
      'accepted_at', 'source_sha256', 'edited_on_accept']) {
      assert.ok(key in meta, `metadata.resolve.${key}`);
    }
    assert.equal(meta.authorship, 1);
    assert.equal(meta.edited_on_accept, false);
    assert.match(meta.source_sha256, /^[0-9a-f]{64}$/);
    const runId = await panel.locator('.jp-resolve-assistant').last().getAttribute('data-run-id');
    assert.equal(meta.run_id, runId);
    assert.equal(nb.cells[3].source, 'x = 2');
    // one undo takes the accepted cell out again, redo puts it back
    await page.locator('.jp-NotebookPanel .jp-Cell').nth(0).locator('.jp-InputPrompt').click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('z');
    await page.waitForFunction(() => document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length === 3);
    assert.ok(!(await cellSources(page)).includes(BMI));
    assert.equal((await cellSources(page))[2], 'x = 2', 'the person\'s own edit is not undone with it');
    await page.keyboard.press('Shift+Z');
    await page.waitForFunction(() => document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length === 4);
    // the redone cell's editor fills in after the cell itself appears
    await page.locator('.jp-NotebookPanel .jp-Cell').nth(1).locator('.cm-content', { hasText: 'bmi' }).waitFor();
    assert.equal((await cellSources(page))[1], BMI);
  });

  test('Accept and run: the server runs the cell, its output is in the notebook and reaches the model', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await sendText(page, 'What is the total weight?');
    const card = await proposalOf(panel, 'What is the total weight?');
    await card.locator('button.jp-resolve-accept-run').click();
    await card.locator('.jp-resolve-proposal-status', { hasText: /accepted \(ran\)/ }).waitFor({ timeout: 120_000 });
    await answered(panel);
    assert.match(toolResultAfter('What is the total weight?'), /195/);
    // below cell-b, with its output and execution count
    const cell = page.locator('.jp-NotebookPanel .jp-Cell').nth(3);
    assert.match(await cell.locator('.cm-content').innerText(), /df\.weight\.sum/);
    await cell.locator('.jp-OutputArea-output', { hasText: '195' }).waitFor();
    assert.match(await cell.locator('.jp-InputPrompt').innerText(), /\[\d+\]/);
  });

  test('Reject with a reason: the notebook is unchanged and the model is told', async () => {
    const { page } = suite.session;
    const before = await cellSources(page);
    const panel = await openPanel(page);
    await sendText(page, 'Change the second cell');
    const card = await proposalOf(panel, 'Change the second cell');
    // a diff against the cell it replaces, as the open notebook has it
    assert.equal(await card.locator('.jp-resolve-proposal-cell').getAttribute('data-kind'), 'diff');
    assert.equal(await card.locator('.jp-resolve-diff-del').innerText(), '-print("second")');
    assert.equal(await card.locator('.jp-resolve-diff-add').innerText(), '+print("third")');
    await shot(card, 'notebook-proposal-diff');
    await card.locator('button.jp-resolve-reject').click();
    await card.locator('input.jp-resolve-reject-reason').fill('keep it as it is');
    await card.locator('button.jp-resolve-reject-confirm').click();
    await card.locator('.jp-resolve-proposal-status', { hasText: 'rejected: keep it as it is' }).waitFor();
    await answered(panel);
    const told = toolResultAfter('Change the second cell');
    assert.match(told, /reject/i);
    assert.match(told, /keep it as it is/);
    assert.deepEqual(await cellSources(page), before);
  });

  test('Edit before accepting; a notebook that is not open is opened first', async () => {
    const { page } = suite.session;
    // saved and closed: the proposal must open it
    await page.locator('.jp-NotebookPanel .jp-Cell').nth(0).locator('.jp-InputPrompt').click();
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => !document.querySelector('.jp-mod-current.jp-mod-dirty'));
    await page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', { hasText: NB }).locator('.lm-TabBar-tabCloseIcon').click();
    await page.locator('.jp-NotebookPanel').waitFor({ state: 'detached' });
    const panel = await openPanel(page);
    await sendText(page, 'Add a heading');
    const card = await proposalOf(panel, 'Add a heading');
    assert.equal(await card.locator('.jp-resolve-proposal-note').innerText(), PAYLOAD);
    assert.equal(await card.locator('img').count(), 0);
    await card.locator('button.jp-resolve-edit').click();
    await card.locator('textarea.jp-resolve-proposal-edit').fill('# Analysis of heights');
    await card.locator('button.jp-resolve-accept').click();
    await card.locator('.jp-resolve-proposal-status', { hasText: /^accepted \(edited\)$/ }).waitFor();
    await answered(panel);
    assert.match(toolResultAfter('Add a heading'), /edit/i);
    // opened, the edited cell last, as markdown, with its metadata
    const last = page.locator('.jp-NotebookPanel .jp-Cell').last();
    await last.waitFor();
    assert.match(await last.getAttribute('class'), /jp-MarkdownCell/);
    assert.match(await last.innerText(), /Analysis of heights/);
    assert.equal(await page.evaluate(() => window.__resolve_pwned), undefined);
    assert.deepEqual(suite.session.errors, []);
  });

  test('the chat stays bound to the notebook across a reload (the state database)', async () => {
    const { page } = suite.session;
    await waitForSavedState(suite.lab, 'jupyter-resolve:notebook', value => value === NB);
    await page.reload();
    await waitForLab(page);
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-bound', { hasText: NB }).waitFor();
    // unbinding is one click
    await panel.locator('.jp-resolve-bound button[aria-label="Stop chatting about this notebook"]').click();
    await panel.locator('.jp-resolve-bound').waitFor({ state: 'detached' });
  });
});
