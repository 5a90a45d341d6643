// Script payloads from a model, its tools and a peer, shown in a real JupyterLab (issue 14, items 1
// and 12): a notebook's %resolve output and the panel render them inert, and load no remote image.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, labForSuite, openPanel, send, shot, waitForLab } from './lab.mjs';

/** A payload that, if it ever runs, leaves a marker in the page saying where it came from. */
const mark = where => `top.__resolve_pwned='${where}'`;
const img = where => `<img src=x onerror="${mark(where)}">`;
// a loopback port nothing listens on: a request there is what an exfiltration would look like
const EXFIL = 'http://127.0.0.1:9/exfil.png';
const py = text => JSON.stringify(text); // a JSON string is a Python string literal too

const TOOL_CODE = [
  `from IPython.display import HTML, display\ndisplay(HTML(${py(
    `<script>${mark('tool-html-script')}</script>${img('tool-html-img')}` +
      `<img src="${EXFIL}?from=tool-html"><p>tool html</p>`
  )}))`,
  `from IPython.display import SVG, display\ndisplay(SVG(${py(
    `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8" onload="${mark('tool-svg-onload')}">` +
      `<script>${mark('tool-svg-script')}</script><rect width="8" height="8"/></svg>`
  )}))`,
  `from IPython.display import Markdown, display\ndisplay(Markdown(${py(
    `# tool markdown\n\n${img('tool-md-img')} ![pixel](${EXFIL}?from=tool-md)`
  )}))`
];

// every run replays these two turns: an answer with three tool calls, then a last answer
const SCRIPT = [
  {
    content:
      `Answer ${img('answer-img')} [click](javascript:${mark('answer-link')}) ` +
      `![chart](${EXFIL}?from=answer)`,
    tool_calls: TOOL_CODE.map(code => ({ name: 'python', arguments: { code } }))
  },
  { content: `Done ${img('answer-final')}` }
]
  .map(turn => JSON.stringify(turn) + '\n')
  .join('');

const PEER_PROMPT = `${img('runs-prompt')} asked by a peer`;

const code = (id, source) => ({
  cell_type: 'code',
  id,
  execution_count: null,
  metadata: {},
  source,
  outputs: []
});

const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    code('load', '%load_ext jupyter_resolve'),
    code('ask', '%%resolve\nShow me everything'),
    code('runs', '%resolve runs'),
    code('replay', '%resolve replay {_resolve.run_id}'),
    code('status', '%resolve status'),
    // the canary: trusted output of this notebook runs script, so the payloads above would too
    code('canary', "from IPython.display import HTML\nHTML('<img src=x onerror=\"top.__resolve_canary=1\">')")
  ]
});

const LABELS = ['sandboxed', 'unsandboxed: agent code runs as you'];

/**
 * Requests for the exfiltration URL that left the browser, from the page or any frame in it.
 * A request the frame's Content-Security-Policy blocked shows up too, failed with "csp": it
 * never left, so it does not count; one still pending does.
 */
function watchExfil(page) {
  const requests = new Map();
  const settle = (request, state) => requests.has(request) && requests.set(request, state);
  page.on('request', r => r.url().includes('exfil.png') && requests.set(r, 'pending'));
  page.on('requestfinished', r => settle(r, 'sent'));
  page.on('requestfailed', r => settle(r, r.failure()?.errorText === 'csp' ? 'blocked' : 'sent'));
  return () =>
    [...requests].filter(([, state]) => state !== 'blocked').map(([r, state]) => `${state} ${r.url()}`);
}

/** Wait until every image under `root` has loaded or failed (its error handler, if any, ran). */
async function imagesSettled(page, root) {
  await page.waitForFunction(
    selector => [...document.querySelectorAll(`${selector} img`)].every(i => i.complete),
    root
  );
}

describe('script payloads stay inert', { timeout: 600_000 }, () => {
  const suite = labForSuite({
    files: { 'payloads.ipynb': NOTEBOOK, 'script.jsonl': SCRIPT },
    // relative to the server's working directory, the root folder
    config: "c.Resolve.script = 'script.jsonl'\n"
  });

  test('in a notebook: %resolve answers, tool outputs, runs and replay', async () => {
    const { page } = suite.session;
    const hits = watchExfil(page);
    // a run started elsewhere, as a peer would, whose prompt %resolve runs lists
    const started = await suite.lab.api('resolve/api/chat', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: PEER_PROMPT }] })
    });
    assert.equal(started.status, 200);
    assert.match(await started.text(), /event: run\.completed/);

    await page.goto(suite.lab.url + 'lab/tree/payloads.ipynb');
    await waitForLab(page);
    // the kernel is up before Run All (which asks for a kernel while the session still starts)
    await page.locator('.jp-StatusBar-TextItem', { hasText: /Python 3.*\| Idle/ }).waitFor();
    await dismissToasts(page);
    await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).click();
    await page.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
    // the last cell ran: every cell before it has
    await page.waitForFunction(() => window.__resolve_canary === 1, null, { timeout: 300_000 });

    const notebook = page.locator('.jp-Notebook');
    const ask = notebook.locator('.jp-Cell').nth(1);
    // the live view, done: the answers (sanitized), a sandboxed frame, the SVG as an image
    await ask.locator('.jp-Cell-outputArea', { hasText: /Done/ }).waitFor({ timeout: 120_000 });
    await ask.locator('.jp-Cell-outputArea', { hasText: /rounds · .* · stop/ }).waitFor();
    await ask.locator('iframe[sandbox=""]').first().waitFor({ state: 'attached' });
    assert.equal(await ask.locator('iframe:not([sandbox=""])').count(), 0);
    await ask.locator('img[src^="data:image/svg+xml;base64,"]').first().waitFor();
    // remote images are links (item 12), from the answer and from tool Markdown
    await ask.locator(`a[href="${EXFIL}?from=answer"]`).first().waitFor();
    await ask.locator(`a[href="${EXFIL}?from=tool-md"]`).first().waitFor();
    // the runs table shows the peer's prompt as text
    const runs = notebook.locator('.jp-Cell').nth(2);
    await runs.locator('td', { hasText: `onerror="${mark('runs-prompt')}"` }).waitFor();
    // the replay re-rendered the run from its log, as inert as the live view
    const replay = notebook.locator('.jp-Cell').nth(3);
    await replay.locator('.jp-Cell-outputArea', { hasText: /Done/ }).waitFor({ timeout: 60_000 });
    await replay.locator('iframe[sandbox=""]').first().waitFor({ state: 'attached' });

    await imagesSettled(page, '.jp-Notebook');
    await shot(page, 'payloads-notebook');
    assert.equal(await page.evaluate(() => window.__resolve_pwned), undefined);
    assert.doesNotMatch(await page.title(), /pwned/i);
    assert.deepEqual(hits(), [], 'no remote image was fetched');
  });

  test('in the panel: the same answer and tool outputs; the header says the sandbox state', async () => {
    const { page } = suite.session;
    const hits = watchExfil(page);
    await page.goto(suite.lab.url + 'lab');
    await waitForLab(page);
    const panel = await openPanel(page);
    const sandbox = panel.locator('.jp-resolve-header .jp-resolve-sandbox');
    await sandbox.waitFor();
    assert.ok(LABELS.includes(await sandbox.innerText()), await sandbox.innerText());

    await send(page, 'Show me everything');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 180_000 });
    await answer.locator('.jp-resolve-markdown', { hasText: 'Done' }).waitFor();
    assert.equal(await answer.locator('.jp-resolve-tool').count(), 3);
    await answer.locator('.jp-resolve-html', { hasText: 'tool html' }).waitFor();
    // remote images from the answer, tool HTML and tool Markdown are links, not images
    for (const from of ['answer', 'tool-html', 'tool-md']) {
      await answer.locator(`a.jp-resolve-remote-image[href="${EXFIL}?from=${from}"]`).waitFor();
    }
    assert.equal(await panel.locator('img[src*="exfil.png"]').count(), 0);

    await imagesSettled(page, '#jp-resolve-panel');
    await shot(panel, 'payloads-panel');
    assert.equal(await page.evaluate(() => window.__resolve_pwned), undefined);
    assert.doesNotMatch(await page.title(), /pwned/i);
    assert.deepEqual(hits(), [], 'no remote image was fetched');
  });
});
