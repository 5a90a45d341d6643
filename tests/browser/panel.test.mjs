// The Resolve panel in chromium against a real `jupyter lab` on the offline scripted model.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dismissToasts,
  labForSuite,
  openPanel,
  send,
  settleNotebook,
  shot,
  waitForLab,
  waitForSavedState
} from './lab.mjs';

const SVG_CODE =
  "from IPython.display import SVG, display; display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" " +
  'width="10" height="10"><rect width="10" height="10"/></svg>\'))';

// a 4×4 red PNG
const RED_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==';

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
    },
    {
      cell_type: 'code',
      id: 'cell-plot',
      execution_count: 2,
      metadata: {},
      source: 'show_red_square()',
      outputs: [
        {
          output_type: 'display_data',
          metadata: {},
          data: { 'image/png': RED_PNG, 'text/plain': '<red square>' }
        }
      ]
    }
  ]
});

/** Open demo.ipynb with its outputs shown and no toast over them. */
async function openDemo(page, lab) {
  await page.goto(lab.url + 'lab/tree/demo.ipynb');
  await waitForLab(page);
  await page.waitForSelector('.jp-OutputArea-child');
  // a clean notebook whose kernel has written its metadata: promoting saves a dirty notebook
  // and reloads a clean one, so the kernel's late write must not fall between the two
  await settleNotebook(page, 'demo.ipynb');
  await dismissToasts(page);
}

describe('the Resolve panel', { timeout: 600_000 }, () => {
  const suite = labForSuite({ files: { 'demo.ipynb': NOTEBOOK } });

  test('opens, streams an answer with a tool card, and names the model', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-model', { hasText: 'offline scripted model' }).waitFor();
    await send(page, 'Run this:\n```python\nprint(6*7)\n```');
    const card = panel.locator('.jp-resolve-tool').last();
    await card.locator('.jp-resolve-tool-name', { hasText: 'python' }).waitFor();
    await card.locator('.jp-resolve-tool-output', { hasText: '42' }).waitFor({ timeout: 120_000 });
    await panel.locator('.jp-resolve-footer', { hasText: 'done' }).last().waitFor();
    const text = await panel.locator('.jp-resolve-assistant').last().innerText();
    assert.match(text, /scripted/i);
    assert.match(text, /rounds \d/);
    // the user's message kept its line breaks (Shift+Enter)
    const user = await panel.locator('.jp-resolve-user').last().innerText();
    assert.equal(user, 'Run this:\n```python\nprint(6*7)\n```');
    await shot(panel, '01-chat-tool-card');
    assert.deepEqual(suite.session.errors, []);
  });

  test('shows an image a tool displayed', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'Draw this:\n```python\n' + SVG_CODE + '\n```');
    const image = panel.locator('.jp-resolve-tool').last().locator('img.jp-resolve-image');
    await image.waitFor();
    const loaded = await image.evaluate(img => img.complete && img.naturalWidth > 0);
    assert.ok(loaded, 'the SVG loaded as an image');
    await panel.locator('.jp-resolve-footer', { hasText: 'done' }).last().waitFor();
    await image.scrollIntoViewIfNeeded();
    await shot(panel.locator('.jp-resolve-tool').last(), '02-image');
  });

  test('reattaches to a live run after a reload, with Last-Event-ID', async () => {
    const { page } = suite.session;
    let panel = await openPanel(page);
    await send(page, "Wait:\n```python\nimport time; time.sleep(12); print('slept well')\n```");
    await panel.locator('.jp-resolve-tool-running').last().waitFor();
    const turns = await panel.locator('.jp-resolve-user').count();
    // the live run reached the workspace on the server (the state a reload starts from)
    await waitForSavedState(suite.lab, 'jupyter-resolve:live', live => live.user.includes('slept well'));
    const resumed = [];
    page.on('request', request => {
      if (/\/resolve\/api\/runs\/[^/]+\/events/.test(request.url())) {
        resumed.push(request.headers()['last-event-id'] ?? null);
      }
    });
    await page.reload();
    await waitForLab(page);
    panel = await openPanel(page);
    const card = panel.locator('.jp-resolve-tool').last();
    await card.locator('.jp-resolve-tool-output', { hasText: 'slept well' }).waitFor();
    await panel.locator('.jp-resolve-footer', { hasText: 'done' }).last().waitFor();
    assert.ok(
      resumed.some(id => id !== null && Number(id) > 0),
      `a reattach sent Last-Event-ID (saw ${JSON.stringify(resumed)})`
    );
    // the earlier turns of the session were replayed from the run log
    assert.equal(await panel.locator('.jp-resolve-user').count(), turns);
    await shot(panel, '03-reattached');
  });

  test('lists sessions and runs, and replays a run', async () => {
    const { page } = suite.session;
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
    // a replayed run shows its own duration (from the runs list), not the time since it began
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#jp-resolve-panel .jp-resolve-assistant')].every(a =>
        a.querySelector('.jp-resolve-footer [class^="jp-resolve-reason-"]')
      )
    );
    const runs = (await (await suite.lab.api('resolve/api/runs')).json()).runs;
    for (const answer of await panel.locator('.jp-resolve-assistant[data-run-id]').all()) {
      const runId = await answer.getAttribute('data-run-id');
      const info = runs.find(r => r.run_id === runId);
      const footer = await answer.locator('.jp-resolve-footer').innerText();
      assert.ok(info && info.ended_at !== null, `run ${info?.run_id} is listed as ended`);
      const seconds = (info.ended_at * 1000 - info.started_at * 1000) / 1000; // as the footer does
      assert.ok(footer.includes(`${seconds.toFixed(1)} s`), `${footer} (expected ${seconds.toFixed(1)} s)`);
    }
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('button', { hasText: 'New session' }).click();
    await panel.locator('.jp-resolve-empty').waitFor();
  });

  test('shows the prompt of a session started elsewhere', async () => {
    const { page } = suite.session;
    // a chat started over the API (as %resolve does): this browser never saw its prompt
    const prompt = 'Asked from a notebook: what is 6*7?';
    const started = await suite.lab.api('resolve/api/chat', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: prompt }] })
    });
    assert.equal(started.status, 200);
    assert.match(await started.text(), /event: run\.completed/);
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('.jp-resolve-row', { hasText: 'Asked from a notebook' }).click();
    await panel.locator('.jp-resolve-user', { hasText: prompt }).waitFor();
    await panel.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
    await panel.locator('button', { hasText: 'New session' }).click();
    await panel.locator('.jp-resolve-empty').waitFor();
  });

  test('Stop cancels a live run', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, "Sleep:\n```python\nimport time; time.sleep(30)\n```");
    await panel.locator('.jp-resolve-tool-running').last().waitFor();
    await panel.locator('button.jp-resolve-stop').click();
    await panel.locator('.jp-resolve-footer', { hasText: 'cancelled' }).last().waitFor({ timeout: 40_000 });
    await shot(panel, '06-cancelled');
  });

  test('promotes cell outputs and finds them in the Artifacts browser', async () => {
    const { page } = suite.session;
    await openDemo(page, suite.lab);
    const outputs = page.locator('.jp-OutputArea-child');
    const promoted = [];
    for (const index of [0, 1]) {
      await outputs.nth(index).click({ button: 'right' });
      await page.locator('.lm-Menu-itemLabel', { hasText: 'Promote output' }).click();
      // every promotion asks for a title
      await page.locator('.jp-Dialog input').fill(`demo output ${index}`);
      await page.locator('.jp-Dialog button.jp-mod-accept').click();
      // this promotion's toast (the last one may still be closing), shown once it is done
      const id = await (
        await page.waitForFunction(seen => {
          for (const toast of document.querySelectorAll('.Toastify__toast')) {
            const found = toast.innerText.match(/Promoted: .*\((art-[0-9a-f]+)\)/s)?.[1];
            if (found && !seen.includes(found)) return found;
          }
          return null;
        }, promoted)
      ).jsonValue();
      promoted.push(id);
      // the open notebook reloaded what the server wrote: the id is in its model, unchanged
      assert.ok(
        await page.evaluate(id => {
          const nb = [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb');
          return !nb.context.model.dirty && JSON.stringify(nb.context.model.toJSON()).includes(id);
        }, id),
        `the open notebook holds ${id} and is clean`
      );
      await dismissToasts(page);
    }
    // the server wrote the artifact ids into the file: the open notebook followed, so a save
    // now does not find the file "changed on disk"
    await page.locator('.jp-Cell .jp-InputArea-editor').first().click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(
      () =>
        document.querySelector('.jp-Dialog') !== null ||
        document.querySelector('.jp-StatusBar-Widget')?.parentElement?.innerText.includes('Saving completed')
    );
    const dialogs = await page.locator('.jp-Dialog').allInnerTexts();
    assert.deepEqual(dialogs, [], 'no dialog (such as "File Changed") after saving');
    const panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Artifacts' }).click();
    const rows = panel.locator('.jp-resolve-artifacts .jp-resolve-row');
    await page.waitForFunction(
      () => document.querySelectorAll('#jp-resolve-panel .jp-resolve-artifacts .jp-resolve-row').length === 2
    );
    // the text output: its preview and provenance
    await rows.filter({ hasText: 'text/plain' }).click();
    const provenance = panel.locator('.jp-resolve-provenance');
    await provenance.waitFor();
    assert.match(await provenance.innerText(), /cell-answer/);
    assert.match(await provenance.innerText(), /demo\.ipynb/);
    await panel.locator('.jp-resolve-artifact-preview pre', { hasText: '42' }).waitFor();
    await shot(panel, '07-artifacts');
    // "Copy id" puts the id on the clipboard
    const id = await panel.locator('.jp-resolve-provenance dd code').first().innerText();
    await panel.locator('.jp-resolve-provenance button', { hasText: 'Copy id' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), id);
    // the image output: previewed as an image, from the cell it came from
    await rows.filter({ hasText: 'image/png' }).click();
    const image = panel.locator('.jp-resolve-artifact-preview img.jp-resolve-image');
    await image.waitFor();
    assert.ok(await image.evaluate(img => img.complete && img.naturalWidth === 4), 'the PNG loaded');
    assert.match(await provenance.innerText(), /cell-plot/);
    await shot(panel, '07-artifacts-image');
    // its row's link opens the notebook at the cell it came from (issue 30.4)
    const activeCell = () =>
      page.evaluate(() => window.jupyterapp.shell.currentWidget.content.activeCell.model.id);
    assert.equal(await activeCell(), 'cell-answer');
    await panel.locator('.jp-resolve-artifacts li', { hasText: 'demo output 1' }).locator('.jp-resolve-artifact-source').click();
    await page.waitForFunction(() => window.jupyterapp.shell.currentWidget?.content?.activeCell?.model.id === 'cell-plot');
  });

  test('"Ask Resolve about this cell" sends the source and outputs', async () => {
    const { page } = suite.session;
    await openDemo(page, suite.lab);
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
      .locator('.jp-resolve-footer', { hasText: /done/ })
      .waitFor();
    await shot(panel, '13-ask-about-cell');
  });

  test('task mode shows the role chain as steps, and replays it so', async () => {
    const { page } = suite.session;
    let panel = await openPanel(page);
    await panel.locator('.jp-resolve-tab', { hasText: 'Chat' }).click();
    await panel.locator('select[aria-label="Mode"]').selectOption('task');
    await send(page, 'Find out what 6*7 is.');
    const steps = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-steps li');
    await steps.first().waitFor();
    assert.ok((await steps.count()) >= 2, 'the chain has steps');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer', { hasText: /done|budget|error|cancelled/ }).waitFor({ timeout: 120_000 });
    assert.equal(await steps.locator('.jp-mod-active').count(), 0, 'no step left running');
    await shot(panel, '12-task-steps');
    await panel.locator('select[aria-label="Mode"]').selectOption('chat');
    // after a reload the session replays the task as one turn, its chain as steps again
    const turns = await panel.locator('.jp-resolve-assistant').count();
    const stepCount = await steps.count();
    await page.reload();
    await waitForLab(page);
    panel = await openPanel(page);
    await page.waitForFunction(n => {
      const answers = [...document.querySelectorAll('#jp-resolve-panel .jp-resolve-assistant')];
      const ended = answers.every(a => a.querySelector('.jp-resolve-footer [class^="jp-resolve-reason-"]'));
      return answers.length === n && ended;
    }, turns);
    const replayed = panel.locator('.jp-resolve-assistant').last();
    assert.equal(await replayed.locator('.jp-resolve-steps li.jp-mod-done').count(), stepCount);
    assert.equal(await panel.locator('.jp-resolve-user').last().innerText(), 'Find out what 6*7 is.');
  });

  test('works from the keyboard alone', async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + 'lab');
    await waitForLab(page);
    const panel = page.locator('#jp-resolve-panel');
    // the shortcut opens the panel with the focus in the message box
    await page.keyboard.press('Control+Alt+r');
    await panel.waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.activeElement?.classList.contains('jp-resolve-input'));
    await page.keyboard.type('Hello from the keyboard');
    await page.keyboard.press('Enter');
    await panel.locator('.jp-resolve-user', { hasText: 'Hello from the keyboard' }).waitFor();
    await panel.locator('.jp-resolve-footer', { hasText: 'done' }).last().waitFor();
    // Shift+Tab walks back to the tabs (one tab stop: the selected tab); arrows move between them
    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
    for (let i = 0; i < 40 && !(await focusedId()).startsWith('jp-resolve-tab-'); i++) {
      await page.keyboard.press('Shift+Tab');
    }
    assert.equal(await focusedId(), 'jp-resolve-tab-chat');
    await page.keyboard.press('ArrowRight');
    assert.equal(await focusedId(), 'jp-resolve-tab-sessions');
    assert.equal(await panel.locator('#jp-resolve-tab-sessions').getAttribute('aria-selected'), 'true');
    await panel.locator('.jp-resolve-row').first().waitFor();
    await page.keyboard.press('ArrowLeft');
    assert.equal(await focusedId(), 'jp-resolve-tab-chat');
    await panel.locator('.jp-resolve-input').waitFor();
  });

  test('is usable in the dark theme at 320 px', async () => {
    const { page } = suite.session;
    await page.goto(suite.lab.url + 'lab');
    await waitForLab(page);
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
    await panel.locator('.jp-resolve-footer', { hasText: 'done' }).last().waitFor();
    const box = await panel.boundingBox();
    assert.ok(box && box.width <= 330, `panel width ${box?.width}`);
    const overflow = await panel.evaluate(n => n.querySelector('.jp-resolve-messages').scrollWidth - n.querySelector('.jp-resolve-messages').clientWidth);
    assert.ok(overflow <= 1, `no horizontal overflow (${overflow})`);
    await shot(page, '08-dark-theme');
    await shot(panel, '09-dark-panel');
  });
});

describe('approvals', { timeout: 900_000 }, () => {
  const suite = labForSuite({ config: "c.Resolve.approval_policy = {'python': 'ask'}\n" });

  test('Approve runs a waiting call', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, 'Run this:\n```python\nprint(6*7)\n```');
    await panel.locator('.jp-resolve-approval').waitFor({ timeout: 90_000 });
    await panel
      .locator('.jp-resolve-tool-waiting .jp-resolve-tool-status', { hasText: 'waiting' })
      .waitFor();
    await shot(panel, '10-approval-waiting');
    await panel.locator('.jp-resolve-approval button', { hasText: 'Approve' }).click();
    await panel.locator('.jp-resolve-tool-output', { hasText: '42' }).waitFor({ timeout: 90_000 });
    await panel.locator('.jp-resolve-footer', { hasText: 'done' }).last().waitFor();
    await shot(panel, '11-approved');
  });

  test('Deny leaves the call unrun and the answer goes on', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await send(page, "Run this:\n```python\nprint('never printed')\n```");
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-approval').waitFor({ timeout: 90_000 });
    await answer.locator('.jp-resolve-approval button', { hasText: 'Deny' }).click();
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 90_000 });
    const card = answer.locator('.jp-resolve-tool').first();
    assert.equal(await card.locator('.jp-resolve-tool-status').innerText(), 'denied');
    assert.equal(await answer.locator('.jp-resolve-tool-output', { hasText: 'never printed' }).count(), 0);
    await shot(panel, '14-denied');
  });

  test('Approve works inside a task: the decision reaches the step that asked', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await panel.locator('select[aria-label="Mode"]').selectOption('task');
    await send(page, 'Run this:\n```python\nprint(6*7)\n```');
    const answer = panel.locator('.jp-resolve-assistant').last();
    const footer = answer.locator('.jp-resolve-footer', { hasText: /done|budget|error|cancelled/ });
    const approve = answer.locator('.jp-resolve-approval button', { hasText: 'Approve' });
    let approved = 0;
    // each step that runs Python asks once; approve until the chain ends
    const deadline = Date.now() + 240_000;
    while (!(await footer.count())) {
      assert.ok(Date.now() < deadline, 'the task ended');
      if (await approve.count()) {
        await approve.first().click();
        approved++;
      }
      await page.waitForTimeout(250);
    }
    assert.ok(approved >= 1, 'a step asked for approval');
    assert.match(await footer.innerText(), /done/);
    await answer.locator('.jp-resolve-tool-output', { hasText: '42' }).first().waitFor();
    assert.equal(await answer.locator('.jp-resolve-tool-waiting').count(), 0);
    await shot(panel, '15-task-approved');
    await panel.locator('select[aria-label="Mode"]').selectOption('chat');
  });
});
