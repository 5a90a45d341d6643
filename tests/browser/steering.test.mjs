// Steering a run from the panel (issue 50.2), in a real JupyterLab (login and XSRF on) with a
// recording fake OpenAI provider: while a python call runs (it waits for a file the test writes),
// the message box stays enabled; Enter sends the message to the running answer, which shows it
// as queued; once the call completes the message reaches the model's next request as a user turn
// and the answer shows it where it took effect. "Send as new run" keeps another message until
// the run ends, then sends it as a run of its own.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { labForSuite, openPanel, send, shot, sidebarWidth } from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

const STEER = 'not that column, use body_mass_g';
const LATER = 'then summarise it in one line';

// Prints that it waits, then waits (at most 60 s) for go.txt, which the test writes once the
// panel shows the steering message queued.
const WAITS = `import os, time
print("waiting for go", flush=True)
for _ in range(1200):
    if os.path.exists("go.txt"):
        break
    time.sleep(0.05)
print("go seen" if os.path.exists("go.txt") else "gave up")`;

/** The first question runs the waiting code; after its result, the answer; the later run's. */
function reply(body) {
  const last = body.messages.at(-1);
  if (textOf(last) === LATER) return { content: 'One line: body mass by species.' };
  if (last?.role === 'user' && textOf(last) === STEER) return { content: 'Using body_mass_g.' };
  if (last?.role === 'tool') return { content: 'Plotted flipper length.' };
  return { tool_calls: [{ name: 'python', arguments: { code: WAITS } }] };
}

const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

describe('steering', { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    config: serverConfigFor(fake)
  });

  test('Enter steers the running answer: queued, then read at its next step', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await sidebarWidth(page, 570);
    const index = await panel.locator('.jp-resolve-assistant').count();
    await send(page, 'Plot the penguins.');
    const answer = panel.locator('.jp-resolve-assistant').nth(index); // this run's, not the next
    const card = answer.locator('.jp-resolve-tool');
    await card.locator('.jp-resolve-tool-output', { hasText: 'waiting for go' }).waitFor();

    // the box stays enabled while the run works, and says what Enter does now
    const input = panel.locator('textarea.jp-resolve-input');
    assert.ok(await input.isEnabled());
    assert.match(await input.getAttribute('placeholder'), /^Steer the running answer/);
    await send(page, STEER); // Enter
    const queued = answer.locator('.jp-resolve-steer-queued', { hasText: STEER });
    await queued.waitFor();
    assert.match(await queued.innerText(), /queued: the agent reads it at its next step/);
    assert.equal(fake.requests.length, 1, 'nothing asked of the model while the call runs');

    // the visible choice: sent as a run of its own once this one ends
    await input.fill(LATER);
    await panel.locator('button.jp-resolve-send-later').click();
    await panel.locator('.jp-resolve-next-run', { hasText: LATER }).waitFor();
    await shot(panel, '30-steer-queued-570px');

    const runs = (await (await suite.lab.api('resolve/api/runs')).json()).runs;
    const live = runs.find(r => r.status === 'running');
    writeFileSync(join(suite.lab.root, '.resolve', 'sessions', live.session_id, 'work', 'go.txt'), '');

    // delivered where it took effect: after the call, before the answer that follows it
    const steered = answer.locator('.jp-resolve-steer', { hasText: STEER });
    await answer.locator('.jp-resolve-markdown', { hasText: 'Using body_mass_g.' }).waitFor({
      timeout: 120_000
    });
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 60_000 });
    assert.equal(await steered.count(), 1, 'the message shows once, where it was read');
    assert.equal(await answer.locator('.jp-resolve-steer-queued').count(), 0);
    const kinds = ['jp-resolve-tool', 'jp-resolve-steer', 'jp-resolve-markdown'];
    const order = await answer.evaluate(
      (node, kinds) =>
        [...node.querySelectorAll(kinds.map(k => '.' + k).join(', '))].map(n =>
          kinds.find(k => n.classList.contains(k))
        ),
      kinds
    );
    assert.deepEqual(order, ['jp-resolve-tool', 'jp-resolve-steer', 'jp-resolve-markdown']);
    const second = fake.requests[1].messages;
    assert.deepEqual(
      second.slice(-2).map(m => m.role),
      ['tool', 'user']
    );
    assert.equal(textOf(second.at(-1)), STEER);

    // then the message kept for later goes as a new run
    const next = panel.locator('.jp-resolve-assistant').nth(index + 1);
    await next.locator('.jp-resolve-markdown', { hasText: 'One line' }).waitFor({ timeout: 120_000 });
    assert.equal(
      await panel.locator('.jp-resolve-user').last().innerText().then(t => t.trim()),
      LATER
    );
    assert.equal(await panel.locator('.jp-resolve-next-run').count(), 0);
    await shot(panel, '31-steered-570px');
    assert.deepEqual(suite.session.errors, []);
  });
});
