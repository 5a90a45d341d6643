// Keystroke to ghost text (issue 47.4): in a real JupyterLab started by the browser tests' own
// launcher (tests/browser/lab.mjs: login and XSRF on, Debian's chromium) on the scripted model,
// the time from a keystroke in a notebook cell to the ghost text of the completion it asks for,
// both taken inside the page (performance.now(): the keydown as the page receives it, the ghost
// text's element as it enters the DOM). Beside it, its floor, also in the page: the same
// keystroke echoed in the editor, the panel's debounce (its settings), and one authenticated
// GET from the page to the same server (`api/status`, just before the keystroke); and the
// completion request's own duration (the page's resource timing). Prints one JSON line:
// {ghost_text_ms: [...], echo_ms: [...], request_ms: [...], completion_ms: [...], debounce_ms}.
//
//   PATH=$PWD/.venv/bin:$PATH node bench/ghost_text.mjs [--samples N]
import { openLab, settleNotebook, startLab, waitForLab, dismissToasts } from '../tests/browser/lab.mjs';

const NB = 'ghost.ipynb';
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [{ cell_type: 'code', id: 'cell-a', execution_count: null, metadata: {}, source: '', outputs: [] }]
});

function argument(name, fallback) {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

/** Marks the page keeps: the last keydown, its echo in the editor, the ghost text's arrival. */
function installMarks() {
  const marks = { down: 0, echo: 0, ghost: 0, echoed: '' };
  window.__ghostMarks = marks;
  document.addEventListener('keydown', () => (marks.down = performance.now()), { capture: true });
  new MutationObserver(() => {
    const now = performance.now();
    if (!marks.down) return;
    const line = document.querySelector('.jp-NotebookPanel .jp-CodeCell .cm-line')?.textContent;
    if (!marks.echo && line === marks.echoed) marks.echo = now;
    if (!marks.ghost && document.querySelector('.jp-NotebookPanel .jp-GhostText')) marks.ghost = now;
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}

async function sample(page) {
  const editor = page.locator('.jp-NotebookPanel .jp-CodeCell .cm-content').first();
  await editor.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Backspace');
  await page.keyboard.type('import'); // no completion for this line (tests' scripted list)
  await page.waitForTimeout(700); // past the debounce and any answer
  const request = await page.evaluate(async () => {
    const started = performance.now();
    const response = await fetch(new URL('api/status', document.baseURI), { credentials: 'same-origin' });
    await response.text();
    return performance.now() - started;
  });
  await page.evaluate(() => Object.assign(window.__ghostMarks, { down: 0, echo: 0, ghost: 0, echoed: 'import ' }));
  await page.keyboard.press('Space');
  await page.waitForFunction(() => window.__ghostMarks.ghost > 0, null, { timeout: 30_000 });
  const marks = await page.evaluate(() => {
    const marks = window.__ghostMarks;
    const asked = performance
      .getEntriesByType('resource')
      .filter(e => e.name.includes('resolve/api/completion') && e.startTime >= marks.down)
      .pop();
    return { ...marks, completion: asked ? asked.responseEnd - asked.startTime : null };
  });
  await page.keyboard.press('Escape');
  const completion = marks.completion;
  return { ghost: marks.ghost - marks.down, echo: marks.echo - marks.down, request, completion };
}

const samples = argument('--samples', 5);
const lab = await startLab({ files: { [NB]: NOTEBOOK } });
let session;
try {
  session = await openLab(lab);
  const { page } = session;
  await page.goto(lab.url + `lab/tree/${NB}`);
  await waitForLab(page);
  await settleNotebook(page, NB);
  await dismissToasts(page);
  await page.locator('.jp-resolve-CompletionToggle', { hasText: 'Resolve completion: on' }).waitFor();
  const settings = await (await lab.api('lab/api/settings/jupyter-resolve:completion')).json();
  const debounce = settings.composite?.debounce ?? 250;
  await page.evaluate(installMarks);
  await sample(page); // warm-up: the first completion starts what it needs
  const found = { ghost_text_ms: [], echo_ms: [], request_ms: [], completion_ms: [], debounce_ms: debounce };
  for (let i = 0; i < samples; i++) {
    const one = await sample(page);
    found.ghost_text_ms.push(one.ghost);
    found.echo_ms.push(one.echo);
    found.request_ms.push(one.request);
    if (one.completion !== null) found.completion_ms.push(one.completion);
  }
  console.log(JSON.stringify(found));
} finally {
  await session?.browser.close();
  await lab.stop();
}
