// The Resolve panel in chromium against a real `jupyter lab` on the offline scripted model.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dismissToasts, endpointExists, openLab, openPanel, send, shot, startLab } from './lab.mjs';

const SVG_CODE =
  "from IPython.display import SVG, display; display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" " +
  'width="10" height="10"><rect width="10" height="10"/></svg>\'))';

const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    {
      cell_type: 'code',
      id: 'cell-answer',
      execution_count: 1,
      metadata: {},
      source: 'print(6 * 7)',
      outputs: [{ output_type: 'stream', name: 'stdout', text: '42\n' }]
    }
  ]
});

describe('the Resolve panel', { timeout: 600_000 }, () => {
  let lab;
  let session;

  before(async () => {
    lab = await startLab({ files: { 'demo.ipynb': NOTEBOOK } });
    session = await openLab(lab);
  });

  afterEach(async t => {
    // a failure leaves a picture of the whole page behind
    if (t.passed === false && session) {
      await shot(session.page, `failed-${t.name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
    }
  });

  after(async () => {
    await session?.browser.close();
    await lab?.stop();
  });

  test('opens, streams an answer with a tool card, and names the model', async () => {
    const { page } = session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-model', { hasText: 'offline scripted model' }).waitFor();
    await send(page, 'Run this:\n```python\nprint(6*7)\n```');
    const card = panel.locator('.jp-resolve-tool').last();
    await card.locator('.jp-resolve-tool-name', { hasText: 'python' }).waitFor();
    await card.locator('.jp-resolve-tool-output', { hasText: '42' }).waitFor({ timeout: 120_000 });
    await panel.locator('.jp-resolve-footer', { hasText: 'stop' }).last().waitFor();
    const text = await panel.locator('.jp-resolve-assistant').last().innerText();
    assert.match(text, /scripted/i);
    assert.match(text, /rounds \d/);
    // the user's message kept its line breaks (Shift+Enter)
    const user = await panel.locator('.jp-resolve-user').last().innerText();
    assert.equal(user, 'Run this:\n```python\nprint(6*7)\n```');
    await shot(panel, '01-chat-tool-card');
    assert.deepEqual(session.errors, []);
  });

  test('shows an image a tool displayed', async () => {
    const { page } = session;
    const panel = await openPanel(page);
    await send(page, 'Draw this:\n```python\n' + SVG_CODE + '\n```');
    const image = panel.locator('.jp-resolve-tool').last().locator('img.jp-resolve-image');
    await image.waitFor();
    const loaded = await image.evaluate(img => img.complete && img.naturalWidth > 0);
    assert.ok(loaded, 'the SVG loaded as an image');
    await panel.locator('.jp-resolve-footer', { hasText: 'stop' }).last().waitFor();
    await image.scrollIntoViewIfNeeded();
    await shot(panel.locator('.jp-resolve-tool').last(), '02-image');
  });

  test('reattaches to a live run after a reload, with Last-Event-ID', async () => {
    const { page } = session;
    let panel = await openPanel(page);
    await send(page, "Wait:\n```python\nimport time; time.sleep(12); print('slept well')\n```");
    await panel.locator('.jp-resolve-tool-running').last().waitFor();
    const turns = await panel.locator('.jp-resolve-user').count();
    const resumed = [];
    page.on('request', request => {
      if (/\/resolve\/api\/runs\/[^/]+\/events/.test(request.url())) {
        resumed.push(request.headers()['last-event-id'] ?? null);
      }
    });
    await page.reload();
    await page.waitForSelector('.jp-LabShell');
    panel = await openPanel(page);
    const card = panel.locator('.jp-resolve-tool').last();
    await card.locator('.jp-resolve-tool-output', { hasText: 'slept well' }).waitFor();
    await panel.locator('.jp-resolve-footer', { hasText: 'stop' }).last().waitFor();
    assert.ok(
      resumed.some(id => id !== null && Number(id) > 0),
      `a reattach sent Last-Event-ID (saw ${JSON.stringify(resumed)})`
    );
    // the earlier turns of the session were replayed from the run log
    assert.equal(await panel.locator('.jp-resolve-user').count(), turns);
    await shot(panel, '03-reattached');
  });

  test('lists sessions and runs, and replays a run', async () => {
    const { page } = session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Runs' }).click();
    await page.waitForFunction(
      () => document.querySelectorAll('#jp-resolve-panel .jp-resolve-row').length >= 3
    );
    await shot(panel, '04-runs');
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('.jp-resolve-row').first().waitFor();
    await shot(panel, '05-sessions');
    await panel.locator('.jp-resolve-row').first().click();
    await panel.locator('.jp-resolve-tool-output', { hasText: '42' }).first().waitFor();
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('button', { hasText: 'New session' }).click();
    await panel.locator('.jp-resolve-empty').waitFor();
  });

  test('Stop cancels a live run', async () => {
    const { page } = session;
    const panel = await openPanel(page);
    await send(page, "Sleep:\n```python\nimport time; time.sleep(30)\n```");
    await panel.locator('.jp-resolve-tool-running').last().waitFor();
    await panel.locator('button.jp-resolve-stop').click();
    await panel.locator('.jp-resolve-footer', { hasText: 'cancelled' }).last().waitFor({ timeout: 40_000 });
    await shot(panel, '06-cancelled');
  });

  test('promotes a cell output and finds it in the Artifacts browser', async t => {
    if (!(await endpointExists(lab, 'resolve/api/artifacts'))) {
      t.skip('GET resolve/api/artifacts is not served yet (artifacts API not merged)');
      return;
    }
    const { page } = session;
    await page.goto(lab.url + 'lab/tree/demo.ipynb');
    await page.waitForSelector('.jp-OutputArea-child');
    await page.locator('.jp-OutputArea-child').first().click({ button: 'right' });
    await page.locator('.lm-Menu-itemLabel', { hasText: 'Promote output' }).click();
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Artifacts' }).click();
    const row = panel.locator('.jp-resolve-artifacts .jp-resolve-row').first();
    await row.waitFor();
    await row.click();
    await panel.locator('.jp-resolve-provenance').waitFor();
    assert.match(await panel.locator('.jp-resolve-provenance').innerText(), /cell-answer|demo\.ipynb/);
    await shot(panel, '07-artifacts');
  });

  test('"Ask Resolve about this cell" sends the source and outputs', async () => {
    const { page } = session;
    await page.goto(lab.url + 'lab/tree/demo.ipynb');
    await page.waitForSelector('.jp-OutputArea-child');
    await dismissToasts(page);
    await page.locator('.jp-Cell .jp-InputArea-editor').first().click({ button: 'right' });
    await page.locator('.lm-Menu-itemLabel', { hasText: 'Ask Resolve about this cell' }).click();
    await page.locator('.jp-Dialog button.jp-mod-accept').click();
    const panel = await openPanel(page);
    const user = panel.locator('.jp-resolve-user').last();
    await user.waitFor();
    const text = await user.innerText();
    assert.match(text, /print\(6 \* 7\)/);
    assert.match(text, /42/);
    assert.match(text, /demo\.ipynb/);
    await panel
      .locator('.jp-resolve-assistant')
      .last()
      .locator('.jp-resolve-footer', { hasText: /stop/ })
      .waitFor();
    await shot(panel, '13-ask-about-cell');
  });

  test('task mode shows the role chain as steps', async t => {
    if (!(await endpointExists(lab, 'resolve/api/tasks/none/events'))) {
      t.skip('resolve/api/tasks is not served yet');
      return;
    }
    const { page } = session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Chat' }).click();
    await panel.locator('select[aria-label="Mode"]').selectOption('task');
    await send(page, 'Find out what 6*7 is.');
    const steps = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-steps li');
    await steps.first().waitFor();
    assert.ok((await steps.count()) >= 2, 'the chain has steps');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer', { hasText: /stop|budget|error|cancelled/ }).waitFor({ timeout: 120_000 });
    assert.equal(await steps.locator('.jp-mod-active').count(), 0, 'no step left running');
    await shot(panel, '12-task-steps');
    await panel.locator('select[aria-label="Mode"]').selectOption('chat');
  });

  test('is usable in the dark theme at 320 px', async () => {
    const { page } = session;
    await page.goto(lab.url + 'lab');
    await page.waitForSelector('.jp-LabShell');
    await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Settings$/ }).click();
    await page.locator('.lm-Menu-itemLabel', { hasText: /^Theme$/ }).hover();
    await page.locator('.lm-Menu-itemLabel', { hasText: /^JupyterLab Dark$/ }).click();
    await page.waitForFunction(() => document.body.dataset.jpThemeLight === 'false');
    const panel = await openPanel(page);
    await page.evaluate(() => {
      const node = document.getElementById('jp-resolve-panel');
      node.parentElement.style.width = '320px';
    });
    await send(page, 'Run this:\n```python\nprint(6*7)\n```');
    await panel.locator('.jp-resolve-tool-output', { hasText: '42' }).last().waitFor();
    await panel.locator('.jp-resolve-footer', { hasText: 'stop' }).last().waitFor();
    const box = await panel.boundingBox();
    assert.ok(box && box.width <= 330, `panel width ${box?.width}`);
    const overflow = await panel.evaluate(n => n.querySelector('.jp-resolve-messages').scrollWidth - n.querySelector('.jp-resolve-messages').clientWidth);
    assert.ok(overflow <= 1, `no horizontal overflow (${overflow})`);
    await shot(page, '08-dark-theme');
    await shot(panel, '09-dark-panel');
  });
});

describe('approvals', { timeout: 600_000 }, () => {
  test('Approve runs a waiting call', async t => {
    const probe = await startLab();
    const served = await endpointExists(probe, 'resolve/api/runs/none/approvals/none', {
      method: 'POST',
      body: '{"decision":"approve"}'
    });
    await probe.stop();
    if (!served) {
      t.skip('POST resolve/api/runs/{id}/approvals/{call_id} is not served yet');
      return;
    }
    // A fresh server on a loaded 2-core machine has once missed the first message here (never
    // reproduced alone): one retry on a new server, with a screenshot and the server log kept.
    for (let attempt = 1; ; attempt++) {
      const lab = await startLab({ config: "c.Resolve.approval_policy = {'python': 'ask'}\n" });
      const session = await openLab(lab);
      try {
        const { page } = session;
        const panel = await openPanel(page);
        await send(page, 'Run this:\n```python\nprint(6*7)\n```');
        await panel.locator('.jp-resolve-approval').waitFor({ timeout: 90_000 });
        await panel
          .locator('.jp-resolve-tool-waiting .jp-resolve-tool-status', { hasText: 'waiting' })
          .waitFor();
        await shot(panel, '10-approval-waiting');
        await panel.locator('.jp-resolve-approval button', { hasText: 'Approve' }).click();
        await panel.locator('.jp-resolve-tool-output', { hasText: '42' }).waitFor({ timeout: 90_000 });
        await shot(panel, '11-approved');
        break;
      } catch (error) {
        await shot(session.page, `10-approval-attempt-${attempt}-failed`).catch(() => {});
        if (attempt >= 2) {
          throw new Error(`${error.message}\n--- server log ---\n${lab.log().slice(-4000)}`);
        }
        t.diagnostic(`attempt ${attempt} failed (${error.message.split('\n')[0]}); retrying`);
      } finally {
        await session.browser.close();
        await lab.stop();
      }
    }
  });
});
