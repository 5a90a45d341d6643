// The panel's Runs and Sessions tabs read the server's paged listings a page at a time and load
// the next page as the list is scrolled (issue 33.3). A real JupyterLab (login and XSRF on)
// whose root holds 130 made-up run logs in 60 sessions: three pages of runs, two of sessions.
// The Status tab makes, lists and revokes MCP-scoped tokens (issue 31.6).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { labForSuite, openPanel, shot } from './lab.mjs';

const RUNS = 130;
const SESSIONS = 60;
const PAGE = 50; // the panel's page (the server's default)

/** Run logs as a server leaves them (tests/run_logs.py writes the same): run i is 10 s after i-1. */
function runLogs() {
  const files = {};
  const base = Date.now() / 1000 - RUNS * 10;
  const line = (seq, type, data, ts) => JSON.stringify({ seq, type, data, ts }) + '\n';
  for (let i = 0; i < RUNS; i++) {
    const run_id = `run-made-${String(i).padStart(6, '0')}`;
    const ts = base + i * 10;
    const started = {
      run_id,
      session_id: `s-made-${String(i % SESSIONS).padStart(5, '0')}`,
      prompt: `question ${i}`,
      soul: null,
      model: 'scripted',
      budget: { rounds: 8 },
      tools: [],
      peer: null,
      parent: null,
      task_id: null
    };
    files[`.resolve/runs/${run_id}.jsonl`] =
      line(1, 'run.started', started, ts) +
      line(2, 'text.delta', { run_id, text: `answer ${i}` }, ts + 1) +
      line(3, 'usage', { run_id, prompt_tokens: 100, completion_tokens: 20 }, ts + 1) +
      line(4, 'run.completed', { run_id, reason: 'stop', rounds: 1 }, ts + 2);
  }
  return files;
}

/** Until the server's run index holds every log (it is rebuilt in the background at start). */
async function indexed(lab) {
  for (;;) {
    const body = await (await lab.api('resolve/api/runs?limit=1')).json();
    if (!body.indexing) return;
    await new Promise(r => setTimeout(r, 200));
  }
}

/** Scroll the list's end into view until it holds `count` rows. */
async function scrollUntil(list, rows, count) {
  await list.locator('.jp-resolve-list-end').scrollIntoViewIfNeeded();
  await assert.doesNotReject(() =>
    rows.nth(count - 1).waitFor({ state: 'attached', timeout: 30_000 })
  );
}

describe('paged Runs and Sessions tabs', { timeout: 600_000 }, () => {
  const suite = labForSuite({ files: runLogs() });

  test('the Runs tab shows a page, then loads the next ones as it is scrolled', async () => {
    await indexed(suite.lab);
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Runs' }).click();
    const list = panel.locator('.jp-resolve-runs');
    const rows = list.locator('.jp-resolve-row');
    await rows.first().waitFor();
    assert.equal(await rows.count(), PAGE, 'one page at first');
    assert.equal(await rows.first().getAttribute('data-run-id'), 'run-made-000129', 'newest first');
    assert.match(await rows.first().innerText(), /question 129[\s\S]*120 tokens/);
    await list.locator('.jp-resolve-load-more').waitFor();
    await shot(panel, 'lists-runs-first-page');
    await scrollUntil(list, rows, 2 * PAGE);
    await scrollUntil(list, rows, RUNS);
    await list.locator('.jp-resolve-list-all', { hasText: `All ${RUNS} runs shown.` }).waitFor();
    assert.equal(await rows.count(), RUNS);
    assert.equal(await rows.last().getAttribute('data-run-id'), 'run-made-000000', 'oldest last');
    const ids = await rows.evaluateAll(nodes => nodes.map(n => n.dataset.runId));
    assert.equal(new Set(ids).size, RUNS, 'no run twice');
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first throughout');
    assert.equal(await list.locator('.jp-resolve-load-more').count(), 0);
  });

  test('the Sessions tab lists GET sessions a page at a time, newest run first', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    const list = panel.locator('.jp-resolve-sessions');
    const rows = list.locator('.jp-resolve-row');
    await rows.first().waitFor();
    assert.equal(await rows.count(), PAGE);
    // run 129 is the newest, in session 129 % 60 = 9, which its run 9 began
    assert.equal(await rows.first().getAttribute('data-session-id'), 's-made-00009');
    assert.match(await rows.first().innerText(), /question 9\s+3 runs/);
    await scrollUntil(list, rows, SESSIONS);
    await list.locator('.jp-resolve-list-all', { hasText: `All ${SESSIONS} sessions shown.` }).waitFor();
    const ids = await rows.evaluateAll(nodes => nodes.map(n => n.dataset.sessionId));
    assert.equal(new Set(ids).size, SESSIONS, 'no session twice');
    // Refresh starts again from the first page
    await list.locator('button', { hasText: 'Refresh' }).click();
    await list.locator('.jp-resolve-load-more').waitFor();
    assert.equal(await rows.count(), PAGE);
  });

  test('the Status tab makes an MCP token, shows it once with the URL, lists it and revokes it', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Status' }).click();
    const tokens = panel.locator('section[aria-label="MCP tokens"]');
    await tokens.locator('.jp-resolve-empty', { hasText: 'No MCP tokens.' }).waitFor();
    await tokens.locator('input[aria-label="Token name"]').fill('my editor');
    await tokens.locator('button', { hasText: 'New token' }).click();
    const made = tokens.locator('[aria-label="New MCP token"]');
    const value = (await made.locator('.jp-resolve-mcp-token-value').innerText()).trim();
    assert.equal(await made.locator('.jp-resolve-mcp-url').innerText(), suite.lab.url + 'resolve/mcp');
    await made.locator('button', { hasText: 'Copy token' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), value);
    const row = tokens.locator('.jp-resolve-mcp-token', { hasText: 'my editor' });
    await row.waitFor();
    const id = await row.getAttribute('data-token-id');
    const listed = await (await suite.lab.api('resolve/api/mcp-tokens')).json();
    assert.deepEqual(listed.tokens.map(t => [t.id, t.name]), [[id, 'my editor']]);
    assert.ok(!JSON.stringify(listed).includes(value), 'the server lists no token value');
    // the shown token opens the MCP endpoint (its initialize answers), and only that
    const initialize = token =>
      fetch(suite.lab.url + 'resolve/mcp', {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream'
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }
        })
      });
    assert.equal((await initialize(value)).status, 200);
    await shot(panel, 'lists-mcp-token-new');
    await made.locator('button', { hasText: 'Done' }).click();
    assert.equal(await made.count(), 0, 'the token is not shown again');
    await row.locator('button', { hasText: 'Revoke' }).click();
    await tokens.locator('.jp-resolve-empty', { hasText: 'No MCP tokens.' }).waitFor();
    assert.deepEqual((await (await suite.lab.api('resolve/api/mcp-tokens')).json()).tokens, []);
    assert.ok([401, 403].includes((await initialize(value)).status), 'a revoked token opens nothing');
  });
});
