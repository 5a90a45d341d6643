// External agents in the panel (issue 36): an ACP agent (the tests' bench agent, written against
// the official SDK) is in the picker next to the souls; its permission request is an approval
// card (with the agent's own "always" choices), its run says "external agent" with the agent's
// name, and replays after a reload. Real JupyterLab, login and XSRF on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labForSuite, openPanel, repo, send, shot, waitForLab } from './lab.mjs';

const AGENT = join(repo, 'tests', 'jupyter_resolve', 'acp', 'agents', 'bench_agent.py');
const agents = {
  bench: {
    command: [join(repo, '.venv', 'bin', 'python'), AGENT],
    env: { BENCH_STATE: join(mkdtempSync(join(tmpdir(), 'resolve-acp-')), 'agent-state') },
    description: "the tests' agent"
  }
};

describe('an external agent in the panel', { timeout: 600_000 }, () => {
  const suite = labForSuite({ config: `c.Resolve.acp_agents = ${JSON.stringify(agents)}\n` });

  test('in the picker; a permission is an approval card; the run replays after a reload', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    const picker = panel.locator('select[aria-label="Soul"]');
    const group = picker.locator('optgroup[label="External agents"] option');
    await group.first().waitFor({ state: 'attached' });
    assert.deepEqual(await group.allInnerTexts(), ['bench']);
    await picker.selectOption({ label: 'bench' });
    await send(page, 'permission please');
    const answer = panel.locator('.jp-resolve-assistant').first();
    await answer.locator('.jp-resolve-agent-label', { hasText: 'external agent · bench' }).waitFor({ timeout: 120_000 });
    const approval = answer.locator('.jp-resolve-approval');
    await approval.waitFor({ timeout: 120_000 });
    await shot(answer, 'agent-approval');
    await approval.locator('button', { hasText: 'Approve' }).click();
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    await answer.getByText('outcome:yes-once').waitFor(); // the text renders a moment after
    const runId = await answer.getAttribute('data-run-id');
    // the agent's own "always" choices are offered on its calls
    await send(page, 'permission again');
    const second = panel.locator('.jp-resolve-assistant').nth(1);
    await second.locator('.jp-resolve-approval').waitFor({ timeout: 120_000 });
    await second.locator('.jp-resolve-approval button', { hasText: 'Always deny' }).click();
    await second.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    await second.getByText('outcome:no-always').waitFor();
    const { runs } = await (await suite.lab.api('resolve/api/runs')).json();
    assert.equal(runs.find(r => r.run_id === runId)?.status, 'completed');
    // the run is replayed from its log after a reload, still named as the agent's
    await page.reload();
    await waitForLab(page);
    const again = (await openPanel(page)).locator(`.jp-resolve-assistant[data-run-id="${runId}"]`);
    await again.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 60_000 });
    assert.match(await again.locator('.jp-resolve-agent-label').innerText(), /external agent · bench/);
    await again.getByText('outcome:yes-once').waitFor();
    assert.equal(await again.locator('.jp-resolve-approval').count(), 0, 'decided: no buttons');
    assert.deepEqual(suite.session.errors, []);
  });
});
