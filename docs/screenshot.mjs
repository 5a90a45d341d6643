// Retakes docs/_static/panel.png, the README's and the docs' picture of the panel: a real
// `jupyter lab` on the offline scripted model, a notebook open, one chat with a tool call.
// Run from the repository root after `make setup`:
//   PATH=$PWD/.venv/bin:$PATH node docs/screenshot.mjs
import { join } from 'node:path';
import { openLab, openPanel, repo, send, settleNotebook, startLab, waitForLab } from '../tests/browser/lab.mjs';

const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    {
      cell_type: 'code',
      id: 'cell-data',
      execution_count: 1,
      metadata: {},
      source: 'totals = [12, 19, 7, 25]\nsum(totals)',
      outputs: [{ output_type: 'execute_result', execution_count: 1, metadata: {}, data: { 'text/plain': '63' } }]
    }
  ]
});

const lab = await startLab({ files: { 'analysis.ipynb': NOTEBOOK } });
const session = await openLab(lab, { width: 1280, height: 760 });
try {
  const { page } = session;
  await page.goto(lab.url + 'lab/tree/analysis.ipynb');
  await waitForLab(page);
  await settleNotebook(page, 'analysis.ipynb');
  const panel = await openPanel(page);
  // widen the right sidebar: drag the split handle between the main area and the sidebar
  const handle = page.locator('#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)').last();
  const box = await handle.boundingBox();
  if (box) {
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x - 260, box.y + box.height / 2, { steps: 10 });
    await page.mouse.up();
  }
  await send(page, 'Run this:\n```python\nprint(sum([12, 19, 7, 25]) / 4)\n```');
  const card = panel.locator('.jp-resolve-tool').last();
  await card.locator('.jp-resolve-tool-output', { hasText: '15.75' }).waitFor({ timeout: 120_000 });
  await panel.locator('.jp-resolve-footer', { hasText: 'stop' }).last().waitFor();
  await page.screenshot({ path: join(repo, 'docs', '_static', 'panel.png') });
} finally {
  await session.browser.close();
  await lab.stop();
}
