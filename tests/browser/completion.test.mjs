// Inline completion in the notebook editor (issue 35.4), in a real JupyterLab with the scripted
// model: typing `import ` in a code cell shows the provider's ghost text, Tab accepts it into the
// cell; with python among the disabled languages no ghost text comes. The time from the keystroke
// to the ghost text is printed (a figure for the bench, not asserted).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, settleNotebook, shot, waitForLab } from './lab.mjs';

const NB = 'complete.ipynb';
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    { cell_type: 'markdown', id: 'cell-md', metadata: {}, source: '# Completion' },
    { cell_type: 'code', id: 'cell-a', execution_count: null, metadata: {}, source: '', outputs: [] }
  ]
});

/** Set the completion plugin's settings through the server (as the Settings Editor does). */
async function setCompletionSettings(lab, settings) {
  const response = await lab.api('lab/api/settings/jupyter-resolve:completion', {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ raw: JSON.stringify(settings) })
  });
  assert.ok(response.ok, `settings PUT: ${response.status}`);
}

/** Count the page's completion requests from now on. */
function countCompletionRequests(page) {
  const seen = { count: 0 };
  page.on('request', request => {
    if (request.url().includes('/resolve/api/completion')) seen.count++;
  });
  return seen;
}

/** The code cell's editor, emptied, with the cursor in it. */
async function emptyCell(page) {
  const editor = page.locator('.jp-NotebookPanel .jp-CodeCell .cm-content').first();
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Backspace');
  return editor;
}

describe('inline completion in a notebook', { timeout: 600_000 }, () => {
  const suite = labForSuite({ files: { [NB]: NOTEBOOK } });

  before(async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await settleNotebook(page, NB);
    await dismissToasts(page);
  });

  test('typing shows the ghost text, Tab accepts it; the status bar names the state', async () => {
    const { page } = suite.session;
    await page.locator('.jp-resolve-CompletionToggle', { hasText: 'Resolve completion: on' }).waitFor();
    const editor = await emptyCell(page);
    const started = Date.now();
    await page.keyboard.type('import ');
    const ghost = page.locator('.jp-NotebookPanel .jp-GhostText');
    await ghost.waitFor({ timeout: 30_000 });
    console.log(`keystroke to ghost text: ${Date.now() - started} ms`);
    await page.waitForFunction(() => document.querySelector('.jp-GhostText')?.textContent === 'numpy as np');
    await shot(page.locator('.jp-NotebookPanel'), 'completion-ghost-text');
    await page.keyboard.press('Tab');
    await page.waitForFunction(() => document.querySelector('.jp-GhostText') === null);
    assert.equal(await editor.innerText(), 'import numpy as np');
  });

  test('a disabled language shows no ghost text', async () => {
    const { page, errors } = suite.session;
    await setCompletionSettings(suite.lab, { disabledLanguages: ['python'] });
    await page.reload();
    await waitForLab(page);
    await settleNotebook(page, NB);
    await dismissToasts(page);
    await emptyCell(page);
    const asked = countCompletionRequests(page);
    await page.keyboard.type('import ');
    await page.waitForTimeout(2000); // well past the debounce and the scripted answer
    assert.equal(await page.locator('.jp-GhostText').count(), 0);
    assert.equal(asked.count, 0, 'the server was not asked');
    assert.deepEqual(errors, []);
  });

  test('the status-bar item turns completion off and on', async () => {
    const { page } = suite.session;
    await setCompletionSettings(suite.lab, {});
    await page.reload();
    await waitForLab(page);
    await settleNotebook(page, NB);
    const toggle = page.locator('.jp-resolve-CompletionToggle');
    await toggle.filter({ hasText: 'on' }).waitFor();
    await toggle.click();
    await toggle.filter({ hasText: 'off' }).waitFor();
    const saved = await (await suite.lab.api('lab/api/settings/jupyter-resolve:completion')).json();
    assert.equal(saved.settings.enabled, false);
    await toggle.click();
    await toggle.filter({ hasText: 'on' }).waitFor();
  });
});

describe('inline completion when the model is out of reach', { timeout: 300_000 }, () => {
  process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // set before the lab starts: it reads it
  // nothing listens on the discard port: the provider's request fails at once
  const suite = labForSuite({
    files: { [NB]: NOTEBOOK },
    config: [
      "c.Resolve.provider = 'openai'",
      "c.Resolve.base_url = 'http://127.0.0.1:9/v1'",
      "c.Resolve.model = 'gpt-4o-mini'",
      "c.Resolve.api_key_env = 'RESOLVE_FAKE_KEY'",
      ''
    ].join('\n')
  });

  test('the error shows as JupyterLab shows a provider error, with the server message', async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await settleNotebook(page, NB);
    await dismissToasts(page);
    await emptyCell(page);
    await page.keyboard.type('import ');
    const indicator = page.locator('.jp-NotebookPanel .jp-GhostText-errorIndicator');
    await indicator.waitFor({ timeout: 30_000 });
    const title = await indicator.getAttribute('title');
    assert.match(title, /^Resolve: /);
    console.log(`the error shown: ${title}`);
  });
});
