// What `make lab` shows on the offline scripted model from plain prompts, no script (issue
// 30.9): a plot whose image is in the tool card, its promotion once approved, and a proposed
// cell in a notebook chat (docs/user-guide/getting-started.md lists the prompts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, openPanel, send, settleNotebook, shot, waitForLab } from './lab.mjs';

const NB = 'numbers.ipynb';
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [{ cell_type: 'code', id: 'cell-n', execution_count: null, metadata: {}, source: 'n = 5', outputs: [] }]
});

async function answered(panel) {
  await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
}

describe('the offline model shows everything', { timeout: 900_000 }, () => {
  const suite = labForSuite({ files: { [NB]: NOTEBOOK } });

  test('"plot something" draws, and the image is in the tool card', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'plot something');
    const card = panel.locator('.jp-resolve-tool').last();
    const image = card.locator('img.jp-resolve-image');
    await image.waitFor({ timeout: 120_000 });
    assert.ok(await image.evaluate(img => img.complete && img.naturalWidth > 100), 'the plot loaded');
    await answered(panel);
    assert.match(await panel.locator('.jp-resolve-assistant').last().innerText(), /scripted model/);
    await image.scrollIntoViewIfNeeded();
    await shot(card, 'demo-plot');
  });

  test('"promote the plot" waits for Approve, then the artifact is listed', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'promote the plot');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-approval').waitFor({ timeout: 90_000 });
    await shot(panel, 'demo-promote-waiting');
    await answer.locator('.jp-resolve-approval button', { hasText: 'Approve' }).click();
    await answered(panel);
    assert.match(await answer.innerText(), /promoted 'plot\.png' as artifact art-/);
    await panel.locator('.jp-resolve-tab', { hasText: 'Artifacts' }).click();
    await panel.locator('.jp-resolve-artifacts .jp-resolve-row', { hasText: 'Demo plot' }).waitFor();
    await shot(panel, 'demo-promoted');
    await panel.locator('.jp-resolve-tab', { hasText: 'Chat' }).click();
  });

  test('"add a cell that ..." in a notebook chat proposes one; Accept puts it in', async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await settleNotebook(page, NB);
    await dismissToasts(page);
    await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-bound', { hasText: NB }).waitFor();
    await send(page, 'add a cell that squares some numbers');
    const card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-proposal');
    await card.waitFor({ timeout: 120_000 });
    assert.match(await card.innerText(), /squares/);
    await shot(card, 'demo-proposal');
    await card.locator('button.jp-resolve-accept').click();
    await card.locator('.jp-resolve-proposal-status', { hasText: /^accepted$/ }).waitFor();
    await answered(panel);
    const sources = await page.locator('.jp-NotebookPanel .jp-Cell .jp-InputArea-editor .cm-content').allInnerTexts();
    assert.ok(sources.some(s => s.includes('squares = [n * n for n in range(1, 6)]')), sources.join('\n---\n'));
    assert.deepEqual(suite.session.errors, []);
  });
});
