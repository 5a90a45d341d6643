// The panel in the default sidebar (issue 30.7): at 250 px its tabs fit one row (icons, their
// labels on hover), tool-card headers never break inside a word, code, tracebacks and tables
// scroll sideways instead of wrapping, the message box grows with its text, and an accepted
// proposal's card shows no raw JSON arguments. Every tab is kept as a screenshot at 250 px and
// at 570 px under test-output/browser/. A real JupyterLab with a recording fake model.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, openPanel, shot, waitForLab } from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

const NB = 'wide.ipynb';
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [{ cell_type: 'code', id: 'cell-a', execution_count: null, metadata: {}, source: 'x = 1', outputs: [] }]
});
const LONG = 'measurement_with_a_rather_long_name';
const CODE = `print(${JSON.stringify(LONG + '_' + 'x'.repeat(120))})\nraise ValueError("${'a deliberately long message '.repeat(4)}")`;
const TABLE = [
  'Here is the summary:',
  '',
  `| ${LONG} | another_column_with_a_long_name | third_column_name |`,
  '|---|---|---|',
  '| 1.5 | 2.25 | 3.125 |',
  '',
  '```python',
  `result = compute_something_with_a_long_name(${LONG}=1, another_argument_name=2, third=3)`,
  '```'
].join('\n');
const PROPOSED = `summary_${LONG} = df.groupby("group_with_a_long_name").agg(["mean", "median", "std"])`;

function reply(body) {
  const messages = body.messages ?? [];
  if (messages.at(-1)?.role === 'tool') return { content: TABLE };
  const asked = textOf([...messages].reverse().find(m => m.role === 'user'));
  if (asked.includes('propose')) {
    const args = { notebook: NB, cells: [{ cell_type: 'code', source: PROPOSED }], after_cell_id: 'cell-a' };
    return { content: 'A cell:', tool_calls: [{ name: 'notebook_propose', arguments: args }] };
  }
  return { content: 'Running it.', tool_calls: [{ name: 'python', arguments: { code: CODE } }] };
}

const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

const TABS = ['Chat', 'Sessions', 'Transcript', 'Runs', 'Artifacts', 'Status'];

async function answered(panel) {
  await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: /done|stop/i }).waitFor({ timeout: 120_000 });
}

async function sendText(page, text) {
  const input = page.locator('#jp-resolve-panel textarea.jp-resolve-input');
  await input.click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** Each tab, clicked by its (hover) name, kept as `layout-<width>-<tab>.png`. */
async function shootTabs(page, panel, width) {
  for (const name of TABS) {
    await panel.locator(`.jp-resolve-tab[title="${name}"]`).click();
    await page.waitForTimeout(300); // lists load, then the picture
    await shot(panel, `layout-${width}-${name.toLowerCase()}`);
  }
  await panel.locator('.jp-resolve-tab[title="Chat"]').click();
}

/** The tab buttons' tops, the tab bar's height and one tab's height. */
function tabRows(panel) {
  return panel.locator('.jp-resolve-tabs').evaluate(bar => ({
    tops: [...bar.querySelectorAll('.jp-resolve-tab')].map(t => t.offsetTop),
    bar: bar.offsetHeight,
    tab: bar.querySelector('.jp-resolve-tab').offsetHeight
  }));
}

/** Drag the right sidebar's edge so the panel is `width` px wide. */
async function widen(page, panel, width) {
  const box = await panel.boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x - 2, y);
  await page.mouse.down();
  await page.mouse.move(box.x - 2 - (width - box.width), y, { steps: 8 });
  await page.mouse.up();
  await page.waitForFunction(w => Math.abs(document.querySelector('#jp-resolve-panel').offsetWidth - w) <= 4, width);
}

describe('the panel at 250 px and at 570 px', { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    files: { [NB]: NOTEBOOK },
    config: serverConfigFor(fake)
  });

  before(async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await dismissToasts(page);
  });

  test('at 250 px: one tab row, whole headers, scrolling code, a growing box, no raw arguments', async () => {
    const { page } = suite.session;
    await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
    const panel = await openPanel(page);
    assert.ok(Math.abs((await panel.boundingBox()).width - 250) <= 4, 'the default sidebar');
    const rows = await tabRows(panel);
    assert.equal(new Set(rows.tops).size, 1, `one row of tabs: ${rows.tops}`);
    assert.ok(rows.bar < 2 * rows.tab, `the tab bar is one row high: ${rows.bar} for ${rows.tab}`);
    // the labels are the tabs' names, shown on hover
    assert.deepEqual(await panel.locator('.jp-resolve-tab').evaluateAll(ts => ts.map(t => t.title)), TABS);

    // the message box grows with its lines
    const input = panel.locator('textarea.jp-resolve-input');
    const empty = (await input.boundingBox()).height;
    await input.click();
    for (let i = 0; i < 5; i++) {
      await page.keyboard.type(`line ${i}`);
      await page.keyboard.press('Shift+Enter');
    }
    assert.ok((await input.boundingBox()).height > empty + 20, 'the box grew');
    await page.keyboard.press('Control+a');
    await page.keyboard.press('Backspace');

    await sendText(page, 'Run the failing code');
    await answered(panel);
    const card = panel.locator('.jp-resolve-tool').last();
    const header = card.locator('.jp-resolve-tool-header');
    const lineHeight = await header.evaluate(h => h.querySelector('.jp-resolve-tool-status').offsetHeight);
    assert.ok((await header.evaluate(h => h.clientHeight)) < 2 * lineHeight + 10, 'a header is one line');
    const output = card.locator('.jp-resolve-tool-output');
    await output.waitFor();
    assert.match(await output.innerText(), /ValueError/);
    const scrolls = el => ({ white: getComputedStyle(el).whiteSpace, wide: el.scrollWidth > el.clientWidth + 20 });
    assert.deepEqual(await output.evaluate(scrolls), { white: 'pre', wide: true }, 'the traceback scrolls');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await shot(answer, 'layout-250-tool-card');
    const table = answer.locator('.jp-resolve-markdown table');
    assert.equal((await table.evaluate(scrolls)).wide, true, 'the table scrolls');
    assert.ok((await table.boundingBox()).width <= (await answer.boundingBox()).width, 'within its card');
    const code = answer.locator('.jp-resolve-markdown pre').last();
    assert.deepEqual(await code.evaluate(scrolls), { white: 'pre', wide: true }, 'code scrolls');
    assert.equal(await code.locator('code').evaluate(c => getComputedStyle(c).whiteSpace), 'pre');

    await sendText(page, 'Please propose a cell');
    const proposal = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-proposal');
    await proposal.waitFor({ timeout: 120_000 });
    await proposal.locator('button.jp-resolve-accept').click();
    await proposal.locator('.jp-resolve-proposal-status', { hasText: /^accepted$/ }).waitFor();
    await answered(panel);
    const proposalCard = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-tool', { has: page.locator('.jp-resolve-proposal') });
    await proposalCard.locator('.jp-resolve-tool-header').click(); // open the details
    assert.equal(await proposalCard.locator('.jp-resolve-tool-args').count(), 0, 'no raw JSON arguments');
    assert.ok(!(await proposalCard.innerText()).includes('"cells"'));
    await shootTabs(page, panel, 250);
  });

  test('at 570 px the tabs show their labels, still on one row', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await widen(page, panel, 570);
    const rows = await tabRows(panel);
    assert.equal(new Set(rows.tops).size, 1);
    const labels = await panel.locator('.jp-resolve-tab-label').evaluateAll(ls => ls.map(l => l.offsetWidth));
    assert.ok(labels.every(w => w > 20), `labels shown: ${labels}`);
    await shootTabs(page, panel, 570);
  });
});
