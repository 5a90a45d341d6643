// Provenance in chromium against a real `jupyter lab` on the offline scripted model (issue 49):
// agent-written cells carry a discreet badge that turns "edited" when their source changes, and
// an artifact row's Export downloads its RO-Crate and Reproduce shows its verdict on the row.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, openPanel, send, settleNotebook, shot, waitForLab } from './lab.mjs';

const NB = 'authored.ipynb';
const ACCEPTED = 'y = x * 14';
const resolve = (source_sha256, extra = {}) => ({
  authorship: 1,
  run_id: 'run-20261204-101500-a1b2c3d4',
  call_id: 'call_1',
  proposal_id: 'proposal-1',
  model: 'scripted',
  accepted_by: 'ada',
  accepted_by_name: 'Ada Lovelace',
  accepted_at: '2026-12-04T10:15:30.000+00:00',
  source_sha256,
  ...extra
});
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    { cell_type: 'code', id: 'mine', execution_count: null, metadata: {}, source: 'x = 3', outputs: [] },
    {
      cell_type: 'code',
      id: 'agent-as-accepted',
      execution_count: null,
      // sha256 of 'y = x * 14'
      metadata: { resolve: resolve('a7ef858029404a9816d9e927a6fb7d7080e8730526a79227ea2e2eee97ef562a') },
      source: ACCEPTED,
      outputs: []
    },
    {
      cell_type: 'code',
      id: 'agent-edited',
      execution_count: null,
      metadata: { resolve: resolve('0'.repeat(64)) },
      source: 'z = y + 1',
      outputs: []
    }
  ]
});

async function answered(panel) {
  await panel
    .locator('.jp-resolve-assistant')
    .last()
    .locator('.jp-resolve-footer', { hasText: 'done' })
    .waitFor({ timeout: 120_000 });
}

describe('provenance in the lab', { timeout: 900_000 }, () => {
  const suite = labForSuite({ files: { [NB]: NOTEBOOK } });

  test('agent-written cells are marked, and an edit flips the mark', async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await settleNotebook(page, NB);
    await dismissToasts(page);
    const badges = page.locator('.jp-NotebookPanel .jp-resolve-authored-badge');
    await page.waitForFunction(() => document.querySelectorAll('.jp-resolve-authored-badge').length === 2);
    assert.equal(await page.locator('.jp-Cell.jp-resolve-authored').count(), 2, 'only the agent-written cells');
    const accepted = badges.nth(0);
    await page.waitForFunction(() => /not edited since/.test(document.querySelector('.jp-resolve-authored-badge')?.title ?? ''));
    assert.match(await accepted.getAttribute('title'), /^Written by the agent \(scripted\) in run run-20261204-101500-a1b2c3d4; accepted by Ada Lovelace on 2026-12-04 10:15 UTC/);
    assert.ok(await badges.nth(1).evaluate(b => b.classList.contains('jp-mod-edited')), 'the edited one is dashed');
    await shot(page.locator('.jp-NotebookPanel'), 'provenance-marked-cells');
    // the person edits the accepted cell: its badge says so
    const editor = page.locator('.jp-Cell', { hasText: ACCEPTED }).locator('.cm-content');
    await editor.click();
    await page.keyboard.press('End');
    await page.keyboard.type('  # mine now');
    await page.waitForFunction(
      () => document.querySelector('.jp-resolve-authored-badge')?.classList.contains('jp-mod-edited')
    );
    assert.match(await accepted.getAttribute('title'), /; edited since$/);
    // undone, it reads as accepted again
    for (let i = 0; i < '  # mine now'.length; i++) await page.keyboard.press('Backspace');
    await page.waitForFunction(
      () => !document.querySelector('.jp-resolve-authored-badge')?.classList.contains('jp-mod-edited')
    );
  });

  test('an artifact row exports its crate and reproduces it', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'plot something');
    await answered(panel);
    await send(page, 'promote the plot');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-approval button', { hasText: 'Approve' }).click({ timeout: 90_000 });
    await answered(panel);
    await panel.locator('.jp-resolve-tab', { hasText: 'Artifacts' }).click();
    const row = panel.locator('.jp-resolve-artifacts li', { hasText: 'Demo plot' });
    await row.waitFor();
    await row.locator('.jp-resolve-row').click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.locator('.jp-resolve-artifact-actions button', { hasText: 'Export' }).click()
    ]);
    assert.match(download.suggestedFilename(), /^art-[0-9a-f]{24}\.crate\.zip$/);
    const zip = await download.createReadStream();
    const chunks = [];
    for await (const chunk of zip) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    assert.equal(bytes.subarray(0, 2).toString(), 'PK', 'a zip');
    assert.ok(bytes.includes(Buffer.from('ro-crate-metadata.json')), 'holding the crate metadata');
    await row.locator('.jp-resolve-artifact-actions button', { hasText: 'Reproduce' }).click();
    const verdict = row.locator('.jp-resolve-reproduction');
    await verdict.waitFor({ timeout: 180_000 });
    assert.match(await verdict.innerText(), /^Reproduced: \d+ calls? run again, the same (bytes|image)/);
    await shot(panel, 'provenance-reproduced');
  });
});
