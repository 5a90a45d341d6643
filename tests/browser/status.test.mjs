// The model picker, the footer's cache counts and cost (issue 19) and the MCP servers' health
// (issue 18), in a real JupyterLab (login and XSRF on) with a recording fake model provider
// that lists its models, and three MCP servers: one that works, one that shows images, and one
// that exits at once.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { labForSuite, openPanel, repo, send, shot, waitForLab, waitForSavedState } from './lab.mjs';
import { startFakeOpenAI, textOf } from './fake-openai.mjs';

const VENV = join(repo, '.venv');
const TIME_SERVER = join(VENV, 'bin', 'mcp-server-time');
const EVERYTHING = join(VENV, 'mcp-node', 'node_modules', '.bin', 'mcp-server-everything');
const BROKEN = ['sh', '-c', 'echo "cannot start: <b>no config</b>" >&2; exit 3'];

// cache counts as OpenAI and LiteLLM send them: 900 read, 50 written, of 1,000 prompt tokens
const CACHED_USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 34,
  total_tokens: 1034,
  prompt_tokens_details: { cached_tokens: 900 },
  cache_creation_input_tokens: 50
};

/** The image tool of server-everything (its name differs between versions), once known. */
let imageTool = null;

function reply(body) {
  const messages = body.messages ?? [];
  if (messages.at(-1)?.role === 'tool') return { content: 'Done.' };
  const asked = textOf([...messages].reverse().find(m => m.role === 'user'));
  if (asked.includes('time in UTC')) {
    return { tool_calls: [{ name: 'mcp__time__get_current_time', arguments: { timezone: 'UTC' } }] };
  }
  if (asked.includes('tiny image')) {
    return { tool_calls: [{ name: `mcp__everything__${imageTool}`, arguments: {} }] };
  }
  return { content: 'Hello from the fake.', usage: CACHED_USAGE };
}

const fake = await startFakeOpenAI(reply, { models: ['fake-small', 'fake-large', 'fake-banned'] });
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

const servers = {
  time: { command: [TIME_SERVER] },
  everything: { command: [EVERYTHING] },
  broken: { command: BROKEN }
};

describe('the model picker, the footer and the MCP servers', { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    config: [
      "c.Resolve.provider = 'openai'",
      `c.Resolve.base_url = '${fake.baseUrl}'`,
      "c.Resolve.model = 'fake-small'",
      "c.Resolve.api_key_env = 'RESOLVE_FAKE_KEY'",
      "c.Resolve.allowed_models = ['fake-small', 'fake-large']",
      'c.Resolve.models_ttl = 0.0', // every picker load asks the provider
      'c.Resolve.prices = {"fake-large": {"input": 10, "output": 20, "cache_read": 1, "cache_write": 12.5}}',
      `c.Resolve.mcp_servers = ${JSON.stringify(servers)}`,
      ''
    ].join('\n')
  });

  const picker = () => suite.session.page.locator('#jp-resolve-panel select[aria-label="Model"]');
  const options = () => picker().locator('option').allInnerTexts();

  async function reload(page) {
    await page.reload();
    await waitForLab(page);
    return openPanel(page);
  }

  test('the picker offers the allowed models; the pick reaches the provider and is remembered', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await picker().waitFor();
    assert.deepEqual(await options(), ['fake-small (default)', 'fake-large']);
    await picker().selectOption('fake-large');
    await send(page, 'Say hello.');
    const answer = panel.locator('.jp-resolve-assistant').last();
    const footer = answer.locator('.jp-resolve-footer', { hasText: 'done' });
    await footer.waitFor();
    assert.equal(fake.requests.at(-1).model, 'fake-large');
    // 50 uncached × $10 + 900 read × $1 + 50 written × $12.5 + 34 out × $20, per million
    assert.equal(
      await answer.locator('.jp-resolve-usage').innerText(),
      '1,034 tokens (900 cached, 50 written to cache) · $0.0027'
    );
    await shot(panel, '20-model-picker-footer');
    await waitForSavedState(suite.lab, 'jupyter-resolve:model', v => v === 'fake-large');
    await reload(page);
    await picker().waitFor();
    assert.equal(await picker().inputValue(), 'fake-large');
    // back to the default: no model in the body, the server's default answers
    await picker().selectOption('');
    await send(page, 'Say hello again.');
    await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor();
    assert.equal(fake.requests.at(-1).model, 'fake-small');
    // a price unknown for the model: tokens, no cost
    assert.equal(
      await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-usage').innerText(),
      '1,034 tokens (900 cached, 50 written to cache)'
    );
  });

  test('a model the server does not allow is refused with its reason', async () => {
    const { page } = suite.session;
    // a list from before the allowlist changed: the picker offers what the server now refuses
    // (a regular expression: ServerConnection adds a cache-busting query)
    const models = /\/resolve\/api\/models(\?|$)/;
    await page.route(models, route =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({
          provider: 'openai',
          default: 'fake-small',
          allowed: null,
          source: 'provider',
          models: [{ id: 'fake-small' }, { id: 'fake-banned' }]
        })
      })
    );
    try {
      const panel = await reload(page);
      await picker().locator('option', { hasText: 'fake-banned' }).waitFor({ state: 'attached' });
      await picker().selectOption('fake-banned');
      const before = fake.requests.length;
      await send(page, 'Say hello with the banned model.');
      const alert = panel.locator('.jp-resolve-error[role="alert"], .jp-resolve-banner', { hasText: 'not allowed' });
      await alert.first().waitFor();
      const text = await alert.first().innerText();
      assert.match(text, /fake-banned/);
      assert.match(text, /fake-small, fake-large/);
      assert.equal(fake.requests.length, before, 'the provider was not asked');
      await shot(panel, '21-model-not-allowed');
    } finally {
      await page.unroute(models);
    }
  });

  test('when the provider cannot list its models: the allowed names and a quiet note', async () => {
    const { page } = suite.session;
    fake.failModels = true;
    try {
      const panel = await reload(page);
      const note = panel.locator('.jp-resolve-models-note');
      await note.waitFor();
      assert.match(await note.innerText(), /did not list its models .*; showing the allowed models\./);
      assert.deepEqual(await options(), ['fake-small (default)', 'fake-large']);
      await shot(panel, '22-models-not-listed');
    } finally {
      fake.failModels = false;
    }
    await picker().selectOption('');
  });

  test('the Status tab shows one row per MCP server, a failed one with its stderr', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Status' }).click();
    const rows = panel.locator('.jp-resolve-mcp');
    await rows.nth(2).waitFor();
    assert.deepEqual(await rows.evaluateAll(r => r.map(x => x.dataset.server)), ['broken', 'everything', 'time']);
    const time = panel.locator('.jp-resolve-mcp[data-server="time"]');
    assert.ok(await time.evaluate(r => r.classList.contains('jp-mod-ready')));
    assert.match(await time.locator('.jp-resolve-mcp-state').innerText(), /^ready · \d+ tools?$/);
    assert.match(await time.innerText(), /mcp\.time\.get_current_time/);
    const broken = panel.locator('.jp-resolve-mcp[data-server="broken"]');
    assert.ok(await broken.evaluate(r => r.classList.contains('jp-mod-failed')));
    assert.equal(await broken.locator('.jp-resolve-mcp-state').innerText(), 'failed (restarts on its next call)');
    await broken.locator('.jp-resolve-mcp-error').waitFor();
    // the stderr tail: collapsed, then shown as text (the markup stays characters)
    const stderr = broken.locator('.jp-resolve-mcp-stderr');
    assert.equal(await stderr.evaluate(d => d.open), false);
    await stderr.locator('summary').click();
    assert.match(await stderr.locator('pre').innerText(), /cannot start: <b>no config<\/b>/);
    assert.equal(await stderr.locator('pre b').count(), 0);
    await shot(panel, '23-mcp-status');
    // the colours follow the state
    const dot = sel => panel.locator(`.jp-resolve-mcp[data-server="${sel}"] .jp-resolve-mcp-dot`);
    const colour = async sel => dot(sel).evaluate(d => getComputedStyle(d).backgroundColor);
    assert.notEqual(await colour('time'), await colour('broken'));
  });

  test('an MCP tool card is named mcp.<server>.<tool>; its images render as a python one does', async () => {
    const { page } = suite.session;
    const health = await (await suite.lab.api('resolve/api/health')).json();
    imageTool = health.mcp.everything.tools.find(name => /image/i.test(name));
    assert.ok(imageTool, `server-everything lists an image tool: ${health.mcp.everything.tools}`);
    const panel = await openPanel(page);
    await send(page, 'What is the time in UTC?');
    let card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-tool').first();
    await card.locator('.jp-resolve-tool-name', { hasText: 'mcp.time.get_current_time' }).waitFor();
    // MCP tools wait for a person (the default approval policy)
    await card.locator('button', { hasText: 'Approve' }).click();
    await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor();
    assert.match(await card.locator('.jp-resolve-tool-output').innerText(), /UTC/);
    await send(page, 'Show me a tiny image.');
    card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-tool').first();
    await card.locator('.jp-resolve-tool-name', { hasText: `mcp.everything.${imageTool}` }).waitFor();
    await card.locator('button', { hasText: 'Approve' }).click();
    // the same media path as python's display(): an image element of the sanitized renderer
    const image = card.locator('img.jp-resolve-image');
    await image.waitFor({ timeout: 60_000 });
    assert.ok(await image.evaluate(img => img.complete && img.naturalWidth > 0), 'the PNG loaded');
    await shot(panel, '24-mcp-image');
    assert.deepEqual(suite.session.errors, []);
  });
});
