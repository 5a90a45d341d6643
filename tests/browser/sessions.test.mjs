// Sessions in the panel (issue 16): the header names the project instructions a run read, the
// Transcript tab shows what the server keeps of the session, "New session" starts a session the
// server then uses, and a compaction is a quiet line in the run. Real JupyterLab, login and
// XSRF on, the offline scripted model.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { labForSuite, openPanel, send, shot } from './lab.mjs';

const AGENTS = '# How we work here\n\nAnswer in plain words; name the files you touch.\n';

/** The run the panel shows last, as the server lists it. */
async function lastRun(lab, panel) {
  const runId = await panel.locator('.jp-resolve-assistant[data-run-id]').last().getAttribute('data-run-id');
  const { runs } = await (await lab.api('resolve/api/runs')).json();
  const info = runs.find(r => r.run_id === runId);
  assert.ok(info, `run ${runId} is listed`);
  return info;
}

async function answered(panel) {
  await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
}

describe('sessions in the panel', { timeout: 600_000 }, () => {
  const suite = labForSuite({ files: { 'AGENTS.md': AGENTS } });

  test('the header names the instructions; the Transcript tab shows the session', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'My favourite number is 7319.');
    await answered(panel);
    const header = panel.locator('.jp-resolve-header .jp-resolve-instructions');
    await header.waitFor();
    assert.equal(await header.innerText(), 'instructions: AGENTS.md');
    assert.match(await header.getAttribute('title'), /AGENTS\.md \(sha256 [0-9a-f]{12}…\)/);

    await send(page, 'Double it:\n```python\nprint(7319 * 2)\n```');
    await panel.locator('.jp-resolve-tool-output', { hasText: '14638' }).last().waitFor({ timeout: 120_000 });
    await answered(panel);
    const run = await lastRun(suite.lab, panel);

    await panel.locator('.jp-resolve-tab', { hasText: 'Transcript' }).click();
    const items = panel.locator('.jp-resolve-transcript-item');
    await items.filter({ hasText: '14638' }).first().waitFor();
    const texts = await items.allInnerTexts();
    // what the server keeps: both prompts, the call and its result, the answers
    assert.ok(texts.some(t => /^YOU\s+My favourite number is 7319\./i.test(t)), texts.join('\n---\n'));
    assert.ok(texts.some(t => /^CALL python\s+print\(7319 \* 2\)/i.test(t)), texts.join('\n---\n'));
    assert.ok(texts.some(t => /^RESULT python\s+14638/i.test(t)), texts.join('\n---\n'));
    assert.ok(texts.filter(t => /^ASSISTANT/i.test(t)).length >= 2, texts.join('\n---\n'));
    const meta = await panel.locator('.jp-resolve-transcript .jp-resolve-row-meta').innerText();
    assert.ok(meta.startsWith(run.session_id), `${meta} names ${run.session_id}`);
    // the same messages as the endpoint's
    const api = await (await suite.lab.api(`resolve/api/sessions/${run.session_id}/transcript`)).json();
    assert.ok(meta.includes(`${api.messages.length} messages`), meta);
    // nothing in it is rendered as HTML
    assert.equal(await panel.locator('.jp-resolve-transcript .jp-RenderedHTMLCommon').count(), 0);
    await shot(panel, 'sessions-transcript');
  });

  test('"New session" starts a new session id, which the server then uses', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Chat' }).click();
    const before = await lastRun(suite.lab, panel);
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('button', { hasText: 'New session' }).click();
    await panel.locator('.jp-resolve-tab', { hasText: 'Transcript' }).click();
    await panel.locator('.jp-resolve-transcript .jp-resolve-empty', { hasText: 'No session yet' }).waitFor();
    await send(page, 'What is my favourite number?');
    await answered(panel);
    const after = await lastRun(suite.lab, panel);
    assert.notEqual(after.session_id, before.session_id);
    // the server continued nothing: the new session's transcript is this one turn
    const api = await (await suite.lab.api(`resolve/api/sessions/${after.session_id}/transcript`)).json();
    assert.deepEqual(api.messages.filter(m => m.role === 'user').map(m => m.content), ['What is my favourite number?']);
    await panel.locator('.jp-resolve-tab', { hasText: 'Transcript' }).click();
    await panel.locator('.jp-resolve-transcript-item.jp-mod-user', { hasText: 'What is my favourite number?' }).waitFor();
    assert.equal(await panel.locator('.jp-resolve-transcript-item', { hasText: '7319' }).count(), 0);
    // and the panel's next message goes to that session
    await panel.locator('.jp-resolve-tab', { hasText: 'Chat' }).click();
    await send(page, 'Thanks.');
    await answered(panel);
    assert.equal((await lastRun(suite.lab, panel)).session_id, after.session_id);
  });
});

describe('a compaction in the panel', { timeout: 600_000 }, () => {
  // a small window: three long tool outputs in one session do not fit it
  const suite = labForSuite({ config: 'c.Resolve.context_tokens = 4000\n' });

  test('is a quiet line naming the tokens before and after', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    for (const letter of ['a', 'b', 'c']) {
      await send(page, `Print:\n\`\`\`python\nprint('${letter}' * 12000)\n\`\`\``);
      await answered(panel);
    }
    const line = panel.locator('.jp-resolve-compaction').first();
    await line.waitFor();
    // its first line; a step that also summarized shows the summary below it
    const text = (await line.innerText()).split('\n')[0];
    assert.match(text, /^context compacted: [\d,]+ → [\d,]+ tokens · elided \d+ (old )?tool outputs?\b.* to fit [\d,]+ tokens(; \d+ summarized)?$/, text);
    const [before, after] = text.match(/[\d,]+(?= →)|(?<=→ )[\d,]+/g).map(n => Number(n.replace(/,/g, '')));
    assert.ok(after < before, text);
    // quiet: a note, not an error or an answer
    assert.equal(await line.getAttribute('role'), 'note');
    await line.scrollIntoViewIfNeeded();
    await shot(panel.locator('.jp-resolve-assistant').filter({ has: page.locator('.jp-resolve-compaction') }).first(), 'sessions-compaction');
  });
});
