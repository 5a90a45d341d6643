// A person sees what is happening, and what it did survives (issue 46.4, 46.5), in a real
// JupyterLab (login and XSRF on) with a fake OpenAI-compatible provider:
// - a round where the model writes a tool call slowly, as a small local model does, shows
//   "writing a python call…" and then its token count growing, before the call's card;
// - a %resolve cell's output, once its run ended, reads right after the notebook is reloaded
//   with a new kernel, instead of "Error displaying widget: model not found".
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  dismissToasts,
  labForSuite,
  openPanel,
  send,
  settleNotebook,
  shot,
  sidebarWidth,
  waitForLab
} from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

// The call the model writes, long enough to take a few seconds at 300 ms a piece.
const CODE = Array.from({ length: 8 }, (_, i) => `step_${i} = ${i} * 6  # one line of a longer cell`)
  .concat(['print("the answer is", 6 * 7)'])
  .join('\n');

// Opened by the test once it has seen the call being written: the rest of it follows.
let openGate;
const gate = new Promise(ok => (openGate = ok));

function reply(body) {
  const last = body.messages.at(-1);
  if (last?.role === 'tool') return { content: 'The answer is **42**, as the code printed.' };
  const asked = textOf(last);
  if (asked.includes('slowly')) {
    return { tool_calls: [{ name: 'python', arguments: { code: CODE } }], tool_wait: gate, tool_gap_ms: 300 };
  }
  return { tool_calls: [{ name: 'python', arguments: { code: 'print("the answer is", 6 * 7)' } }] };
}

const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

const code = (id, source) => ({ cell_type: 'code', id, execution_count: null, metadata: {}, source, outputs: [] });
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [code('load', '%load_ext jupyter_resolve'), code('ask', '%%resolve\nWhat is six times seven?')]
});
const WIDGET_ERROR = /Error displaying widget|model not found/;

/** Record each text the writing line shows in the answer at `index`, and whether a card is there. */
async function recordWriting(page, index) {
  await page.evaluate(index => {
    const messages = document.querySelector('#jp-resolve-panel .jp-resolve-messages');
    const states = [];
    const record = () => {
      const answer = messages.querySelectorAll('.jp-resolve-assistant')[index];
      if (!answer) return;
      const writing = answer.querySelector('.jp-resolve-writing')?.textContent ?? null;
      const card = answer.querySelector('.jp-resolve-tool') !== null;
      const last = states[states.length - 1];
      if (!last || last.writing !== writing || last.card !== card) states.push({ writing, card });
    };
    new MutationObserver(record).observe(messages, { childList: true, subtree: true, characterData: true });
    window.__resolveWriting = states;
  }, index);
  return () => page.evaluate(() => window.__resolveWriting);
}

const tokensOf = text => Number(/≈ ([\d,]+) tokens?/.exec(text ?? '')?.[1]?.replace(/,/g, '') ?? 0);

describe('what happens, and what survives', { timeout: 900_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    files: { 'ask.ipynb': NOTEBOOK },
    config: serverConfigFor(fake)
  });

  test('a tool call written slowly shows "writing a python call…" and its tokens growing', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    // the empty chat's hint is a real model's: no fenced-code advice
    const hint = await panel.locator('.jp-resolve-empty').innerText();
    assert.doesNotMatch(hint, /```/);
    await sidebarWidth(page, 250);
    const answers = await panel.locator('.jp-resolve-assistant').count();
    const states = await recordWriting(page, answers);
    await send(page, 'Compute it slowly.');
    const answer = panel.locator('.jp-resolve-assistant').nth(answers);
    const writing = answer.locator('.jp-resolve-writing');
    // held after its first piece: the tool's name is known, the call not written yet
    await writing.filter({ hasText: 'writing a python call…' }).waitFor({ timeout: 120_000 });
    const first = tokensOf(await writing.innerText());
    await shot(panel, '46-writing-250px');
    openGate();
    await page.waitForFunction(
      first => {
        const text = document.querySelector('#jp-resolve-panel .jp-resolve-writing')?.textContent ?? '';
        const n = Number(/≈ ([\d,]+) tokens?/.exec(text)?.[1]?.replace(/,/g, '') ?? 0);
        return n > first;
      },
      first,
      { timeout: 60_000 }
    );
    await shot(panel, '47-writing-grows-250px');
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    await answer.locator('.jp-resolve-markdown', { hasText: 'The answer is 42' }).waitFor();
    await shot(panel, '48-written-250px');

    const seen = await states();
    const before = seen.slice(0, seen.findIndex(s => s.card));
    const counts = before.filter(s => s.writing).map(s => tokensOf(s.writing));
    assert.ok(counts.length >= 2, `the writing line changed before the card: ${JSON.stringify(seen)}`);
    assert.ok(
      counts.every((n, i) => !i || n >= counts[i - 1]) && counts.at(-1) > counts[0],
      `its count grows: ${JSON.stringify(counts)}`
    );
    assert.ok(seen.every(s => !(s.card && s.writing)), 'the card replaces the writing line');
    assert.equal(await writing.count(), 0);
    assert.deepEqual(suite.session.errors, []);
  });

  test('a %resolve output reads right after a reload with a new kernel', async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + 'lab/tree/ask.ipynb');
    await waitForLab(page);
    await page.locator('.jp-StatusBar-TextItem', { hasText: /Python 3.*\| Idle/ }).waitFor();
    await settleNotebook(page, 'ask.ipynb');
    await dismissToasts(page);
    await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).click();
    await page.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
    const ask = page.locator('.jp-Notebook .jp-Cell').nth(1);
    // the run ended: its output is the static run, the code and the answer in it
    const output = ask.locator('.jp-Cell-outputArea');
    await output.locator('fieldset', { hasText: 'print("the answer is", 6 * 7)' }).waitFor({ timeout: 180_000 });
    await output.locator('strong', { hasText: '42' }).waitFor();
    await page.evaluate(async () => {
      const nb = [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'ask.ipynb');
      await nb.context.save();
    });
    const saved = JSON.parse(readFileSync(join(suite.lab.root, 'ask.ipynb'), 'utf8'));
    const outputs = saved.cells[1].outputs;
    assert.ok(outputs.length >= 1, 'the output was saved');
    for (const o of outputs) {
      assert.ok(!('application/vnd.jupyter.widget-view+json' in (o.data ?? {})), 'no widget is saved');
    }

    // a new kernel: the old one shut down, the page reloaded (it starts another)
    const sessions = await (await suite.lab.api('api/sessions')).json();
    const old = sessions.find(s => s.path === 'ask.ipynb');
    assert.ok(old, 'the notebook had a kernel');
    await suite.lab.api(`api/sessions/${old.id}`, { method: 'DELETE' });
    await page.reload();
    await waitForLab(page);
    await page.locator('.jp-StatusBar-TextItem', { hasText: /Python 3.*\| Idle/ }).waitFor();
    const now = (await (await suite.lab.api('api/sessions')).json()).find(s => s.path === 'ask.ipynb');
    assert.ok(now && now.kernel.id !== old.kernel.id, 'the reloaded notebook has a new kernel');
    const reloaded = page.locator('.jp-Notebook .jp-Cell').nth(1).locator('.jp-Cell-outputArea');
    await reloaded.locator('strong', { hasText: '42' }).waitFor();
    await reloaded.locator('fieldset', { hasText: 'the answer is 42' }).waitFor();
    assert.doesNotMatch(await reloaded.innerText(), WIDGET_ERROR);
    assert.doesNotMatch(await page.locator('.jp-Notebook').innerText(), WIDGET_ERROR);
    await shot(page, '49-resolve-output-after-reload');
    assert.deepEqual(suite.session.errors, []);
  });

  test('a promoted DataFrame previews as a sanitized table (issue 46.6)', async () => {
    const { page } = suite.session;
    // a DataFrame's HTML as a kernel's bundle carries it, with a payload that must not run
    const table =
      '<table class="dataframe"><thead><tr><th></th><th>species</th><th>mass</th></tr></thead>' +
      '<tbody><tr><th>0</th><td>Adelie</td><td>3701</td></tr></tbody></table>' +
      '<img src=x onerror="top.__resolve_pwned=1"><script>top.__resolve_pwned=2</script>';
    const promoted = await suite.lab.api('resolve/api/artifacts', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ bundle: { 'text/html': table, 'text/plain': 'a DataFrame' }, media_type: 'text/html', title: 'masses' })
    });
    assert.equal(promoted.status, 201, await promoted.text());
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Artifacts' }).click();
    await panel.locator('.jp-resolve-artifacts .jp-resolve-row', { hasText: 'masses' }).click();
    const preview = panel.locator('.jp-resolve-artifact-rendered');
    await preview.locator('td', { hasText: 'Adelie' }).waitFor();
    assert.doesNotMatch(await preview.innerText(), /<table|<td/);
    // the person's name, as the row shows it (the token's user here)
    const row = await panel.locator('.jp-resolve-artifacts .jp-resolve-row', { hasText: 'masses' }).innerText();
    const by = await panel.locator('.jp-resolve-provenance dt:text-is("by") + dd').innerText();
    assert.ok(row.includes(by), `the row (${row}) and the detail (${by}) name the same person`);
    await shot(panel, '52-dataframe-preview-250px');
    assert.equal(await page.evaluate(() => window.__resolve_pwned), undefined);
    assert.deepEqual(suite.session.errors, []);
  });

  test('"New session" keeps the chat bound to its notebook (issue 46.6)', async () => {
    const { page } = suite.session;
    await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-bound', { hasText: 'ask.ipynb' }).waitFor();
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('button', { hasText: 'New session' }).click();
    await panel.locator('.jp-resolve-empty').waitFor();
    // the next python call runs in the notebook's folder, as the header still says
    await panel.locator('.jp-resolve-bound', { hasText: 'ask.ipynb' }).waitFor();
    assert.deepEqual(suite.session.errors, []);
  });
});
