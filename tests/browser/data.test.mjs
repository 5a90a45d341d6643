// Issue 30.3 in a real JupyterLab (login and XSRF on) with a recording fake provider: in a chat
// bound to a notebook, the agent's python reads a file beside the notebook by the relative path
// the notebook would use, and a write among the person's files is refused, naming work/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dismissToasts, labForSuite, openPanel, send, settleNotebook, shot, waitForLab } from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

const NB = 'sub/analysis.ipynb';
const CSV = 'when,value\n2026-01-01,3.5\n2026-01-02,4.25\n2026-01-03,4.25\n';
const READ = "import pandas as pd\ndf = pd.read_csv('measurements.csv')\nprint('shape', df.shape, 'total', df['value'].sum())";
const WRITE = "open('new.txt', 'w').write('x')";
const PROMPT = 'read my measurements';

const notebook = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [{ cell_type: 'code', id: 'c1', execution_count: null, metadata: {}, source: '', outputs: [] }]
});

/** The model: asked to read, it runs python that reads the CSV, then python that writes beside it. */
function reply(body) {
  const sinceUser = body.messages.slice(body.messages.findLastIndex(m => m.role === 'user'));
  if (!textOf(sinceUser[0]).includes(PROMPT)) return { content: 'Noted.' };
  const results = sinceUser.filter(m => m.role === 'tool').length;
  if (results === 0) return { tool_calls: [{ name: 'python', arguments: { code: READ } }] };
  if (results === 1) return { tool_calls: [{ name: 'python', arguments: { code: WRITE } }] };
  return { content: 'Read it; the write was refused.' };
}

const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

/** Drag the right sidebar's edge so the panel is `width` px wide (as layout.test.mjs does). */
async function widen(page, panel, width) {
  const box = await panel.boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x - 2, y);
  await page.mouse.down();
  await page.mouse.move(box.x - 2 - (width - box.width), y, { steps: 8 });
  await page.mouse.up();
  await page.waitForFunction(w => Math.abs(document.querySelector('#jp-resolve-panel').offsetWidth - w) <= 4, width);
}

describe("a notebook chat's python reads beside the notebook, read-only (issue 30.3)", { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    files: { [NB]: notebook, 'sub/measurements.csv': CSV },
    config: serverConfigFor(fake)
  });

  before(async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + `lab/tree/${NB}`);
    await waitForLab(page);
    await page.waitForSelector('.jp-NotebookPanel .jp-Cell');
    await settleNotebook(page, NB);
    await dismissToasts(page);
  });

  test('a relative read_csv finds the file beside the notebook; a write there is refused', async () => {
    const { page } = suite.session;
    await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-bound', { hasText: NB }).waitFor();
    await send(page, PROMPT);
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 180_000 });

    const cards = answer.locator('.jp-resolve-tool');
    assert.equal(await cards.count(), 2);
    const [read, write] = [cards.nth(0), cards.nth(1)];
    // the notebook's own relative path, no FileNotFoundError: the data's shape and its sum
    const readOutput = await read.locator('.jp-resolve-tool-output').innerText();
    assert.match(readOutput, /shape \(3, 2\) total 12\.0/);
    assert.doesNotMatch(readOutput, /FileNotFoundError/);

    const writeOutput = await write.locator('.jp-resolve-tool-output').innerText();
    assert.match(writeOutput, /\[Errno 30\] the person's files are read-only to you/);
    const work = writeOutput.match(/write what you make under (\S+\/work)\//)?.[1];
    assert.ok(work?.startsWith(join(suite.lab.root, '.resolve', 'sessions')), `says where to write instead: ${work}`);
    assert.notEqual(await write.locator('.jp-resolve-tool-status').innerText(), 'done');
    assert.ok(!existsSync(join(suite.lab.root, 'sub', 'new.txt')), 'nothing was written beside the notebook');

    // the model was told the same as the page shows
    const results = fake.requests.at(-1).messages.filter(m => m.role === 'tool').map(textOf);
    assert.match(results.at(-2), /shape \(3, 2\)/);
    assert.match(results.at(-1), /read-only/);
    // wide enough for the refusal's last line, which names work/, scrolled into view
    await widen(page, panel, 880);
    await write.locator('.jp-resolve-tool-output').evaluate(output => {
      output.scrollTop = output.scrollHeight;
      output.scrollIntoView({ block: 'end' });
    });
    await shot(panel, 'data-notebook-folder-read-only');
  });
});
