// Issue 30.5 and 30.6 in a real JupyterLab (login and XSRF on) with a recording fake provider:
// "Ask Resolve about this cell" sends the right-clicked cell, not the active one; a bound chat
// follows the notebook in front and keeps the conversation so far; an `@name` that resolves to
// nothing says so before sending; the header names the model the next run will use; a provider
// whose port refuses shows as unreachable in Status, and its error shows once, in plain words.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, openPanel, send, shot, waitForLab } from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';
import { createServer } from 'node:net';

const code = (id, source) => ({ cell_type: 'code', id, execution_count: null, metadata: {}, source, outputs: [] });
const notebook = cells =>
  JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells
  });
const FIRST = 'first_cell_source = 1';
const THIRD = 'third_cell_source = 3';

const SQUARE =
  "from IPython.display import SVG, display; display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" " +
  'width="10" height="10"><rect width="10" height="10" fill="red"/></svg>\'))';

/** The model: asked to draw, it runs python that displays a square; otherwise it notes. */
function reply(body) {
  const last = body.messages.at(-1);
  if (last?.role === 'tool') return { content: 'Drawn.' };
  if (textOf(last).includes('draw a square')) {
    return { tool_calls: [{ name: 'python', arguments: { code: SQUARE } }] };
  }
  return { content: 'Noted.' };
}

const fake = await startFakeOpenAI(reply, { models: ['gpt-4o-mini', 'gpt-4o'] });
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

const lastUserText = body => textOf(body.messages.filter(m => m.role === 'user').at(-1));

async function answered(panel) {
  await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
}

/** Open `path` in the main area (through the app's own command) and wait for its cells. */
async function openNotebook(page, path) {
  await page.evaluate(async path => {
    await window.jupyterapp.commands.execute('docmanager:open', { path });
  }, path);
  await page.waitForFunction(
    path => window.jupyterapp.shell.currentWidget?.context?.path === path &&
      window.jupyterapp.shell.currentWidget.content.widgets.length > 0,
    path
  );
}

describe('the panel says what is true about cells, notebooks and models', { timeout: 600_000 }, () => {
  const suite = labForSuite({
    files: {
      'a.ipynb': notebook([code('a-1', FIRST), code('a-2', 'second = 2'), code('a-3', THIRD)]),
      'b.ipynb': notebook([code('b-1', 'other = 1')])
    },
    config: serverConfigFor(fake)
  });

  before(async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + 'lab/tree/a.ipynb');
    await waitForLab(page);
    await page.waitForSelector('.jp-NotebookPanel .jp-Cell');
    await dismissToasts(page);
  });

  test('"Ask Resolve about this cell" sends the right-clicked cell, not the active one', async () => {
    const { page } = suite.session;
    await page.locator('.jp-NotebookPanel .jp-Cell').first().locator('.jp-InputPrompt').click();
    const active = () => page.evaluate(() => window.jupyterapp.shell.currentWidget.content.activeCellIndex);
    assert.equal(await active(), 0);
    // a context menu opened without a click first (the keyboard's menu key, a touchpad) leaves
    // the active cell where it was
    await page.locator('.jp-NotebookPanel .jp-Cell').nth(2).locator('.cm-content').evaluate(node => {
      const box = node.getBoundingClientRect();
      node.dispatchEvent(
        new MouseEvent('contextmenu', { bubbles: true, cancelable: true, button: 2, clientX: box.x + 5, clientY: box.y + 5 })
      );
    });
    await page.locator('.lm-Menu-itemLabel', { hasText: 'Ask Resolve about this cell' }).click();
    assert.equal(await active(), 0, 'the first cell is still the active one');
    await page.locator('.jp-Dialog input').fill('What is in this cell?');
    await page.locator('.jp-Dialog button.jp-mod-accept').click();
    const panel = await openPanel(page);
    await answered(panel);
    const told = lastUserText(fake.requests.at(-1));
    assert.match(told, /third_cell_source = 3/);
    assert.doesNotMatch(told, /first_cell_source/);
  });

  test('a bound chat follows the notebook in front; the conversation so far stays', async () => {
    const { page } = suite.session;
    await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-bound', { hasText: 'a.ipynb' }).waitFor();
    const before = await panel.locator('.jp-resolve-user').count();
    assert.ok(before >= 1, 'the question about the cell is still shown after binding');
    await send(page, 'hello from a');
    await answered(panel);
    await openNotebook(page, 'b.ipynb');
    await panel.locator('.jp-resolve-bound', { hasText: 'b.ipynb' }).waitFor();
    await panel.locator('.jp-resolve-user', { hasText: 'hello from a' }).waitFor();
    await send(page, 'hello from b');
    await answered(panel);
    assert.equal(await panel.locator('.jp-resolve-user').count(), before + 2);
    await shot(panel, 'truth-follows-notebook');
  });

  test('an @name that resolves to nothing says so before sending; sending again sends it', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    const asked = fake.requests.length;
    const input = panel.locator('textarea.jp-resolve-input');
    await input.click();
    await page.keyboard.type('plot @nosuch please');
    await page.keyboard.press('Enter');
    const note = panel.locator('.jp-resolve-mention-unknown');
    await note.waitFor();
    assert.match(await note.innerText(), /@nosuch is not a variable in b\.ipynb/);
    assert.equal(await input.inputValue(), 'plot @nosuch please', 'the message is kept');
    assert.equal(fake.requests.length, asked, 'nothing was sent');
    await shot(panel, 'truth-unknown-mention');
    await page.keyboard.press('Enter');
    await answered(panel);
    assert.ok(fake.requests.length > asked, 'sent the second time');
    assert.equal(await note.count(), 0);
  });

  test('the header names the model the next run will use', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    const header = panel.locator('.jp-resolve-header .jp-resolve-model');
    await header.filter({ hasText: 'openai · gpt-4o-mini' }).waitFor();
    await panel.locator('select[aria-label="Model"]').selectOption('gpt-4o');
    // before any run with it: the header says what the next run uses, not what the last one did
    await header.filter({ hasText: /openai · gpt-4o$/ }).waitFor();
    await send(page, 'which model?');
    await answered(panel);
    assert.equal(fake.requests.at(-1).model, 'gpt-4o');
    await panel.locator('select[aria-label="Model"]').selectOption('');
    await header.filter({ hasText: 'openai · gpt-4o-mini' }).waitFor();
  });
});

describe('promotion where things are made (issue 30.4)', { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    config: serverConfigFor(fake)
  });

  test('Promote on a tool card asks a title; the artifact row shows it, a name and a time', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'please draw a square');
    await answered(panel);
    const card = panel.locator('.jp-resolve-tool').last();
    await card.locator('.jp-resolve-tool-body svg, .jp-resolve-tool-body img').first().waitFor();
    assert.doesNotMatch(await card.innerText(), /shown to the person/);
    await card.locator('button.jp-resolve-promote').click();
    await page.locator('.jp-Dialog input').fill('The red square');
    await page.locator('.jp-Dialog button.jp-mod-accept').click();
    await page.locator('.Toastify__toast', { hasText: 'Promoted: The red square' }).waitFor();
    await dismissToasts(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Artifacts' }).click();
    const row = panel.locator('.jp-resolve-artifacts li', { hasText: 'The red square' });
    await row.waitFor();
    const meta = await row.locator('.jp-resolve-row .jp-resolve-row-meta').innerText();
    assert.doesNotMatch(meta, /[0-9a-f]{32}/, 'a name, not the login hash');
    assert.doesNotMatch(meta, /\d{4}-\d\d-\d\dT/, 'local time, not the stored ISO text');
    assert.match(meta, /image\/svg\+xml/);
    const [artifact] = (await (await suite.lab.api('resolve/api/artifacts')).json()).artifacts;
    assert.equal(artifact.title, 'The red square');
    assert.equal(artifact.source.kind, 'tool');
    assert.ok(meta.startsWith(artifact.created_by_name), meta);
    await shot(panel, 'truth-artifact-from-tool-card');
  });
});

/** A loopback port nothing listens on (taken, then closed). */
function closedPort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

const refused = await closedPort();

describe('a provider whose port refuses', { timeout: 600_000 }, () => {
  const suite = labForSuite({
    config: [
      "c.Resolve.provider = 'openai'",
      `c.Resolve.base_url = 'http://127.0.0.1:${refused}/v1'`,
      "c.Resolve.model = 'gpt-4o-mini'",
      "c.Resolve.api_key_env = 'RESOLVE_FAKE_KEY'",
      ''
    ].join('\n')
  });

  test('its error shows once, in plain words, with the setting to change', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'hello?');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer', { hasText: 'ended with an error' }).waitFor({ timeout: 120_000 });
    const errors = await answer.locator('.jp-resolve-error').allInnerTexts();
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.match(errors[0], /c\.Resolve\.base_url/);
    assert.doesNotMatch(errors[0], /^provider_[a-z_]+:/, 'no internal code');
    const summary = await answer.locator('.jp-resolve-summary').innerText();
    assert.doesNotMatch(summary, new RegExp(`127\\.0\\.0\\.1:${refused}`), 'the summary does not repeat it');
    await shot(answer, 'truth-provider-error');
  });

  test('Status shows it unreachable, not "ok"', async t => {
    const health = await (await suite.lab.api('resolve/api/health')).json();
    if (!('reachable' in (health.provider ?? {}))) {
      t.skip('this server does not report provider.reachable yet');
      return;
    }
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Status' }).click();
    const row = panel.locator('.jp-resolve-provider');
    await row.filter({ hasText: 'unreachable' }).waitFor();
    assert.match(await row.innerText(), /c\.Resolve\.base_url/);
    assert.doesNotMatch(await panel.locator('.jp-resolve-list-actions').innerText(), /\bok\b/);
    await shot(panel, 'truth-status-unreachable');
    await panel.locator('.jp-resolve-tab', { hasText: 'Chat' }).click();
  });
});
