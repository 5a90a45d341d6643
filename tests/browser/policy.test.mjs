// An administrator's lock in the panel (issue 37.3): with a policy file (JUPYTER_RESOLVE_POLICY)
// that locks `model`, the model picker is disabled and says it is set by the administrator, and
// a chat sends no model of its own. Real JupyterLab (login and XSRF on), a fake model provider
// that lists its models.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labForSuite, openPanel, send, shot } from './lab.mjs';
import { startFakeOpenAI } from './fake-openai.mjs';

const fake = await startFakeOpenAI(() => ({ content: 'Hello from the fake.' }), {
  models: ['fake-small', 'fake-large']
});
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing
const policy = join(mkdtempSync(join(tmpdir(), 'resolve-policy-')), 'policy.json');
writeFileSync(policy, JSON.stringify({ settings: { model: 'fake-large' } }));
process.env.JUPYTER_RESOLVE_POLICY = policy; // as a spawner sets it

describe('a setting the administrator locked', { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    config: [
      "c.Resolve.provider = 'openai'",
      `c.Resolve.base_url = '${fake.baseUrl}'`,
      "c.Resolve.model = 'fake-small'", // the user's own config: the policy wins
      "c.Resolve.api_key_env = 'RESOLVE_FAKE_KEY'",
      "c.Resolve.allowed_models = ['fake-small', 'fake-large']",
      ''
    ].join('\n')
  });

  test('the model picker is disabled, set by the administrator; the locked model answers', async () => {
    const { page } = suite.session;
    const health = await (await suite.lab.api('resolve/api/health')).json();
    assert.deepEqual(health.locked, { model: 'fake-large' });
    const panel = await openPanel(page);
    const picker = panel.locator('select[aria-label="Model"]');
    await picker.waitFor();
    await page.waitForFunction(() => document.querySelector('#jp-resolve-panel select[aria-label="Model"]')?.disabled);
    assert.equal(await picker.getAttribute('title'), 'set by the administrator (c.Resolve.model = "fake-large")');
    assert.deepEqual(await picker.locator('option').allInnerTexts(), ['fake-large (default)', 'fake-small']);
    await shot(panel.locator('.jp-resolve-header'), 'policy-locked-model');
    await send(page, 'Say hello.');
    await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    assert.equal(fake.requests.at(-1).model, 'fake-large');
    assert.deepEqual(suite.session.errors, []);
  });
});
