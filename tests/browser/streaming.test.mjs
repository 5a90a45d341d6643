// Answers stream on screen (issue 30, point 1), in a real JupyterLab (login and XSRF on) with a
// fake OpenAI provider whose pieces come ~15 ms apart, as a fast real model's do: the answer's
// visible text grows while the run is live, not only once it has ended. The page records each
// state the answer goes through (its rendered text's length, whether the footer shows the run's
// end), so the test asserts on states, not on times. Narrowed to 250 px, the chat stays at its
// end; a running call shows what it prints while it runs.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { labForSuite, openPanel, send, shot, sidebarWidth } from './lab.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

const LINES = Array.from(
  { length: 40 },
  (_, i) => `- point ${i + 1}: the answer keeps growing while the model is still writing it.`
);
// ~220 pieces of 16 characters, 15 ms apart: over three seconds of steady streaming
const ANSWER = `## A long answer\n\n${LINES.join('\n')}\n\nThat is all of it.`;

// Prints that it waits, then waits (at most 20 s) for a file the test writes only on seeing that
// line in the tool card while the call still runs (the same idea as tests/jupyter_resolve's
// test_tool_output.py).
const WAITS_FOR_THE_PANEL = `import os, time
print("waiting for go", flush=True)
for _ in range(400):
    if os.path.exists("go.txt"):
        break
    time.sleep(0.05)
print("go seen" if os.path.exists("go.txt") else "gave up")`;

/** A long streamed answer; asked to run the waiting code, a python call to it, then "Done.". */
function reply(body) {
  const last = body.messages.at(-1);
  if (last?.role === 'tool') return { content: 'Done.' };
  if (textOf(last).includes('waiting code')) {
    return { tool_calls: [{ name: 'python', arguments: { code: WAITS_FOR_THE_PANEL } }] };
  }
  return { content: ANSWER, gap_ms: 15 };
}

const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing

/** Start recording the states of the answer at `index` (every DOM change under the chat). */
async function recordAnswer(page, index) {
  await page.evaluate(index => {
    const messages = document.querySelector('#jp-resolve-panel .jp-resolve-messages');
    const states = [];
    const record = () => {
      const answer = messages.querySelectorAll('.jp-resolve-assistant')[index];
      if (!answer) return;
      const text = [...answer.querySelectorAll('.jp-resolve-markdown')].map(n => n.textContent).join('');
      const ended = answer.querySelector('.jp-resolve-footer [class^="jp-resolve-reason-"]') !== null;
      const last = states[states.length - 1];
      if (!last || last.length !== text.length || last.ended !== ended) {
        states.push({ length: text.length, ended });
      }
    };
    new MutationObserver(record).observe(messages, { childList: true, subtree: true, characterData: true });
    window.__resolveAnswerStates = states;
  }, index);
  return () => page.evaluate(() => window.__resolveAnswerStates);
}

describe('streamed answers', { timeout: 600_000 }, () => {
  after(() => fake.close());
  const suite = labForSuite({
    config: serverConfigFor(fake)
  });

  test('the visible answer grows while the run is live', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await sidebarWidth(page, 570);
    const answers = await panel.locator('.jp-resolve-assistant').count();
    const states = await recordAnswer(page, answers);
    await send(page, 'Tell me at length.');
    const answer = panel.locator('.jp-resolve-assistant').nth(answers);
    // a screenshot mid-stream: some text shown, the run not ended
    await page.waitForFunction(() => {
      const seen = window.__resolveAnswerStates.filter(s => s.length > 0 && !s.ended);
      return seen.length >= 2 || window.__resolveAnswerStates.some(s => s.ended);
    });
    await shot(panel, '16-streaming-570px');
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    await answer.locator('.jp-resolve-markdown', { hasText: 'That is all of it.' }).waitFor();

    const seen = await states();
    const live = seen.slice(0, seen.findIndex(s => s.ended));
    assert.ok(live.length < seen.length, 'the run ended (its footer shows why)');
    let grew = 0;
    for (let i = 1; i < live.length; i++) {
      if (live[i].length > live[i - 1].length && live[i - 1].length > 0) grew++;
    }
    const shown = live.filter(s => s.length > 0).length;
    assert.ok(
      shown >= 1 && grew >= 2,
      `text was shown ${shown} times and grew ${grew} times before the run ended: ${JSON.stringify(seen)}`
    );
    await shot(panel, '17-streamed-570px');
    await sidebarWidth(page, 250);
    // the narrower panel wraps the answer taller: the chat stays at its end (after two frames,
    // once the layout has settled and the resize has been seen)
    const gap = await panel.locator('.jp-resolve-messages').evaluate(async node => {
      await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
      return node.scrollHeight - node.scrollTop - node.clientHeight;
    });
    assert.ok(gap <= 2, `the chat stays at its end when the panel narrows (${gap} px above it)`);
    await shot(panel, '18-streamed-250px');
    assert.deepEqual(suite.session.errors, []);
  });

  test('a running call shows what it prints, live', async () => {
    const { page } = suite.session;
    const panel = await openPanel(page);
    await sidebarWidth(page, 570);
    await send(page, 'Run the waiting code.');
    const card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-tool');
    // the card is still running and already shows the line the code printed
    await card.locator('.jp-resolve-tool-output', { hasText: 'waiting for go' }).waitFor();
    assert.match(await card.getAttribute('class'), /jp-resolve-tool-running/);
    await shot(panel, '19-tool-output-live-570px');
    const runs = (await (await suite.lab.api('resolve/api/runs')).json()).runs;
    const live = runs.find(r => r.status === 'running');
    assert.ok(live, 'the run is live while its card shows the printed line');
    writeFileSync(join(suite.lab.root, '.resolve', 'sessions', live.session_id, 'work', 'go.txt'), '');
    const answer = panel.locator('.jp-resolve-assistant').last();
    await answer.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    assert.match(await card.locator('.jp-resolve-tool-output').innerText(), /go seen/);
    assert.match(await card.locator('.jp-resolve-tool-status').innerText(), /done/);
    assert.deepEqual(suite.session.errors, []);
  });
});
