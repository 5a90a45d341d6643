// Two people in two browser pages on one notebook (issue 40), with jupyter-collaboration (the
// .venv/collab made by `make setup`) and without it: the same tests in both. A fake model
// speaking the OpenAI wire format proposes the cells.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dismissToasts, openLab, openPanel, repo, send, settleNotebook, shot, startLab, waitForLab } from './lab.mjs';
import {
  appendToCell,
  pageDirty,
  pageNotebook,
  readDisk,
  reloadFromDisk,
  sourceOf,
  typedSource,
  waitForDisk,
  waitForTyped
} from './demo-notebook.mjs';
import { startFakeOpenAI, textOf, serverConfigFor } from './fake-openai.mjs';

const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    {
      cell_type: 'code',
      id: 'cell-out',
      metadata: {},
      execution_count: 1,
      source: '6 * 7',
      outputs: [{ output_type: 'execute_result', execution_count: 1, metadata: {}, data: { 'text/plain': '42' } }]
    },
    { cell_type: 'code', id: 'cell-typing', metadata: {}, execution_count: null, source: '', outputs: [] },
    { cell_type: 'code', id: 'cell-mine', metadata: {}, execution_count: null, source: 'mine = 1', outputs: [] }
  ]
});

// long enough that the promotion lands in the middle of it
const TYPED = 'total = sum(range(10))  # typed while the other page promotes';
// what the promoting page has typed, unsaved, before it promotes
const MINE = '  # my own edit, unsaved';
// another unsaved edit of this page's, made while a replace proposal waits
const KEPT = '  # and kept';

async function openDemo(session, lab) {
  await session.page.goto(lab.url + 'lab/tree/demo.ipynb');
  await waitForLab(session.page);
  await session.page.waitForSelector('.jp-OutputArea-child');
  await settleNotebook(session.page, 'demo.ipynb');
  await dismissToasts(session.page);
}

/** Promote the first output of page's notebook and return the artifact id from its toast. */
async function promoteFirstOutput(page, title) {
  await page.locator('.jp-OutputArea-child').first().click({ button: 'right' });
  await page.locator('.lm-Menu-itemLabel', { hasText: 'Promote output' }).click();
  await page.locator('.jp-Dialog input').fill(title);
  await page.locator('.jp-Dialog button.jp-mod-accept').click();
  const toast = page.locator('.Toastify__toast', { hasText: 'Promoted:' });
  await toast.waitFor();
  return (await toast.innerText()).match(/\((art-[0-9a-f]+)\)/)[1];
}

/** The artifact id recorded on the output of cell-out in a notebook's JSON. */
const recordedId = notebook =>
  notebook.cells.find(c => c.id === 'cell-out').outputs[0].metadata?.resolve?.artifact_id;
/** The model: replaces the typed cell when asked, then says it is done once told the result. */
function reply(body) {
  const messages = body.messages ?? [];
  if (messages.at(-1)?.role === 'tool') return { content: 'Noted.' };
  const asked = textOf([...messages].reverse().find(m => m.role === 'user'));
  if (asked.includes('Add a sum to other')) {
    const args = { notebook: 'other.ipynb', cells: [{ cell_type: 'code', source: 'print(sum(range(10)))' }] };
    return { content: 'Here is a cell.', tool_calls: [{ name: 'notebook_propose', arguments: args }] };
  }
  if (asked.includes('Propose a note')) {
    const args = { notebook: 'other.ipynb', cells: [{ cell_type: 'markdown', source: '# A note from the other page' }] };
    return { content: 'Here is a note.', tool_calls: [{ name: 'notebook_propose', arguments: args }] };
  }
  if (asked.includes('Replace the typed cell')) {
    const args = { notebook: 'demo.ipynb', cells: [{ cell_type: 'code', source: 'total = 45' }], replace_cell_id: 'cell-typing' };
    return { content: 'Here is a cell.', tool_calls: [{ name: 'notebook_propose', arguments: args }] };
  }
  return { content: 'I see it.' };
}
const fake = await startFakeOpenAI(reply);
process.env.RESOLVE_FAKE_KEY = 'sk-fake-for-tests'; // the provider wants a key; this one opens nothing
const CONFIG = serverConfigFor(fake);
after(() => fake.close());

// With collaboration the room does not save by itself here (it would 1 s after each change), so
// the file on disk shows whether anything but the person saved the document.
const VARIANTS = [
  {
    name: 'with jupyter-collaboration',
    venv: join(repo, '.venv', 'collab'),
    collaborative: true,
    config: 'c.YDocExtension.document_save_delay = None\n'
  },
  { name: 'without jupyter-collaboration', venv: join(repo, '.venv'), collaborative: false, config: '' }
];

for (const variant of VARIANTS) {
  const skip = existsSync(join(variant.venv, 'bin', 'python')) ? false : `no ${variant.venv} (make setup)`;
  describe(`two pages on one notebook, ${variant.name}`, { timeout: 600_000, skip }, () => {
    let lab, promoter, typist;
    before(async () => {
      const other = { ...JSON.parse(NOTEBOOK), cells: [] };
      const files = { 'demo.ipynb': NOTEBOOK, 'other.ipynb': JSON.stringify(other) };
      lab = await startLab({ files, config: CONFIG + variant.config, venv: variant.venv });
      promoter = await openLab(lab);
      typist = await openLab(lab);
    });
    afterEach(async t => {
      if (t.passed === false) {
        await shot(promoter.page, `failed-collab-promoter-${variant.collaborative}`).catch(() => {});
        await shot(typist.page, `failed-collab-typist-${variant.collaborative}`).catch(() => {});
      }
    });
    after(async () => {
      await promoter?.browser.close();
      await typist?.browser.close();
      await lab?.stop();
    });

    test('promote while the other person types: every character kept, the id on the cell', async () => {
      await openDemo(promoter, lab);
      await openDemo(typist, lab);
      const collaborative = await promoter.page.evaluate(
        () =>
          [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb').context.model
            .collaborative
      );
      assert.equal(collaborative, variant.collaborative, 'the notebook is (not) shared as the variant says');
      // the promoter has an unsaved edit of its own in a third cell
      await promoter.page.locator('.jp-Cell').nth(2).locator('.jp-InputArea-editor').click();
      await promoter.page.keyboard.press('End');
      await promoter.page.keyboard.type(MINE);
      assert.equal(sourceOf(await pageNotebook(promoter.page), 'cell-mine'), `mine = 1${MINE}`);
      assert.equal(await pageDirty(promoter.page), true);
      await typist.page.locator('.jp-Cell').nth(1).locator('.jp-InputArea-editor').click();
      const [id] = await Promise.all([
        promoteFirstOutput(promoter.page, 'the answer'),
        typist.page.keyboard.type(TYPED, { delay: 40 })
      ]);
      await shot(promoter.page, 'collab-promoted');
      // the typist's page kept every character, the promoter's page its own edit and the id
      assert.equal(typedSource(await pageNotebook(typist.page)), TYPED);
      assert.equal(sourceOf(await pageNotebook(promoter.page), 'cell-mine'), `mine = 1${MINE}`);
      assert.equal(recordedId(await pageNotebook(promoter.page)), id);
      if (variant.collaborative) {
        // the panel neither saved nor reverted the document: it is as the people left it,
        // unsaved, and the file is as it was (only the person saves)
        assert.equal(await pageDirty(promoter.page), true, 'the document is still unsaved');
        const file = readDisk(lab.root);
        assert.deepEqual(['cell-out', 'cell-typing', 'cell-mine'].map(c => sourceOf(file, c)), ['6 * 7', '', 'mine = 1']);
        assert.equal(recordedId(file), undefined, 'nothing saved the file');
        // one shared document: both pages see both changes, and the room saves both to disk
        await typist.page.waitForFunction(
          id => JSON.stringify(
            [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb').context.model.toJSON()
          ).includes(id),
          id
        );
        assert.equal(recordedId(await pageNotebook(typist.page)), id);
        assert.equal(typedSource(await pageNotebook(promoter.page)), TYPED);
        assert.equal(sourceOf(await pageNotebook(typist.page), 'cell-mine'), `mine = 1${MINE}`);
        // the person saves: the room writes both people's changes and the id
        await typist.page.keyboard.press('Control+s');
        const disk = await waitForDisk(lab.root, nb => typedSource(nb) === TYPED && recordedId(nb) === id);
        assert.equal(typedSource(disk), TYPED, 'every typed character on disk');
        assert.equal(sourceOf(disk, 'cell-mine'), `mine = 1${MINE}`, "the promoter's edit on disk");
        assert.equal(recordedId(disk), id, 'the artifact id on the cell on disk');
      } else {
        // alone on the file: the server wrote the id to it
        assert.equal(recordedId(await waitForDisk(lab.root, nb => recordedId(nb) === id)), id);
      }
      const manifest = await (await lab.api(`resolve/api/artifacts/${id}`)).json();
      assert.equal(manifest.title, 'the answer');
      assert.deepEqual(promoter.errors, []);
      assert.deepEqual(typist.errors, []);
    });

    /** Alone on the file each page has its own copy: both start from the file with `typed`. */
    async function startFromFile(typed) {
      const nb = JSON.parse(NOTEBOOK);
      nb.cells[1].source = typed;
      nb.cells[2].source = `mine = 1${MINE}`; // as the first test saved it
      const put = await lab.api('api/contents/demo.ipynb', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'notebook', format: 'json', content: nb })
      });
      assert.equal(put.status, 200);
      for (const p of [promoter.page, typist.page]) await reloadFromDisk(p);
    }

    /** Ask page's chat (bound to demo.ipynb) to replace the typed cell; its card, waiting. */
    async function askReplace(page) {
      await page.locator('.jp-NotebookPanel-toolbar [data-command="resolve:ask-about-notebook"]').click();
      const panel = await openPanel(page);
      await panel.locator('.jp-resolve-bound', { hasText: 'demo.ipynb' }).waitFor();
      await send(page, 'Replace the typed cell');
      const card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-proposal');
      await card.waitFor({ timeout: 120_000 });
      return { panel, card };
    }

    const appendToTyped = (page, text) => appendToCell(page, 1, text);

    test('a replace whose cell changed after Accept was sent is refused with the new diff, the edit kept', async () => {
      const page = promoter.page;
      if (!variant.collaborative) {
        await startFromFile(TYPED);
      }
      const { panel, card } = await askReplace(page);
      assert.equal(await card.locator('.jp-resolve-diff-del').first().innerText(), `-${TYPED}`);
      const changed = `${TYPED} + 1`;
      if (variant.collaborative) {
        // the other person's edit reaches the room after this page sent its Accept: hold the
        // Accept until the server reads the cell as changed
        let posted, release;
        const [sent, held] = [new Promise(resolve => (posted = resolve)), new Promise(resolve => (release = resolve))];
        const proposals = /\/resolve\/api\/runs\/[^/]+\/proposals\/[^/?]+(\?.*)?$/;
        await page.route(proposals, async route => {
          if (route.request().method() === 'POST') {
            posted(route.request().url());
            await held;
          }
          await route.continue();
        });
        await card.locator('button.jp-resolve-accept').click();
        const url = new URL(await Promise.race([sent, page.waitForTimeout(30_000).then(() => 'no Accept sent')]));
        await appendToTyped(typist.page, ' + 1');
        const viewPath = url.pathname.slice(new URL(lab.url).pathname.length);
        const current = async () => (await (await lab.api(viewPath)).json()).current?.source;
        for (let n = 0; (await current()) !== changed; n++) {
          assert.ok(n < 300, 'the server reads the changed cell');
          await page.waitForTimeout(100);
        }
        release();
        await panel.locator('.jp-resolve-banner', { hasText: 'The cell changed since you saw this diff' }).waitFor();
        await page.unroute(proposals);
      } else {
        // without a shared document the edit reaches the server when the other person saves;
        // this page does not see it until its Accept is refused
        await appendToTyped(typist.page, ' + 1');
        await typist.page.keyboard.press('Control+s');
        await waitForDisk(lab.root, nb => typedSource(nb) === changed);
        await card.locator('button.jp-resolve-accept').click();
        await panel.locator('.jp-resolve-banner', { hasText: 'The cell changed since you saw this diff' }).waitFor();
      }
      if (!variant.collaborative) {
        // this page still holds the cell its card showed, which an Accept would replace: the
        // diff stays against it, and the card says the file changed, with the diff against it
        const disk = card.locator('.jp-resolve-proposal-disk');
        await disk.locator('.jp-resolve-diff-del', { hasText: changed }).waitFor();
        assert.match(await disk.innerText(), /file on disk changed/);
        const own = card.locator('.jp-resolve-proposal-cell .jp-resolve-diff > div');
        assert.deepEqual(await own.allInnerTexts(), [`-${TYPED}`, '+total = 45']);
        // a second Accept replaces nothing: refused again, this page's cell as it was
        await panel.locator('.jp-resolve-banner button').click();
        await card.locator('button.jp-resolve-accept').click();
        await panel.locator('.jp-resolve-banner', { hasText: 'saved file holds another version' }).waitFor();
        assert.equal(typedSource(await pageNotebook(page)), TYPED);
        // reloaded from disk, this page holds the saved cell: the card's diff is against it
        await reloadFromDisk(page);
        await disk.waitFor({ state: 'detached' });
      }
      // the card shows the diff against the cell as it is, still waiting; the edit is kept
      await card.locator('.jp-resolve-proposal-cell .jp-resolve-diff-del', { hasText: changed }).waitFor();
      assert.equal(await card.locator('.jp-resolve-proposal-status').innerText(), 'waiting for your review');
      await shot(card, `collab-stale-replace-${variant.collaborative}`);
      assert.equal(typedSource(await pageNotebook(typist.page)), changed);
      if (variant.collaborative) {
        assert.equal(typedSource(await pageNotebook(page)), changed);
      }
      // the run ends: reject the proposal
      await card.locator('button.jp-resolve-reject').click();
      await card.locator('button.jp-resolve-reject-confirm').click();
      await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    });

    test("a replace's diff follows the cell while it waits; Accept replaces what it showed", async () => {
      const page = promoter.page;
      const before = `${TYPED} + 1`;
      if (!variant.collaborative) {
        await startFromFile(before);
      }
      const { panel, card } = await askReplace(page);
      assert.equal(await card.locator('.jp-resolve-diff-del').first().innerText(), `-${before}`);
      // with collaboration the other person edits the cell; without it, this page's person
      const editor = variant.collaborative ? typist.page : page;
      const edited = `${before} + 2`;
      await appendToTyped(editor, ' + 2');
      await waitForTyped(page, edited);
      // the card shows the new diff without any click
      await card.locator('.jp-resolve-diff-del', { hasText: edited }).waitFor();
      assert.deepEqual(await card.locator('.jp-resolve-diff > div').allInnerTexts(), [`-${edited}`, '+total = 45']);
      await shot(card, `collab-followed-diff-${variant.collaborative}`);
      // the person has an unsaved edit in another cell too; alone, nothing is saved: the Accept
      // is taken against the person's own edit (the file unchanged since the proposal)
      await appendToCell(page, 2, KEPT);
      if (await panel.locator('.jp-resolve-banner').count()) await panel.locator('.jp-resolve-banner button').click();
      await card.locator('button.jp-resolve-accept').click();
      await card.locator('.jp-resolve-proposal-status', { hasText: /accepted/ }).waitFor({ timeout: 60_000 });
      assert.equal(await panel.locator('.jp-resolve-banner').count(), 0, 'not refused');
      // what the diff showed: the edited cell replaced by the proposed one, in every page
      const pages = variant.collaborative ? [page, typist.page] : [page];
      for (const p of pages) {
        await waitForTyped(p, 'total = 45');
        const sources = (await pageNotebook(p)).cells.map(c => (Array.isArray(c.source) ? c.source.join('') : c.source));
        assert.deepEqual(sources, ['6 * 7', 'total = 45', `mine = 1${MINE}${KEPT}`]);
      }
      if (!variant.collaborative) {
        assert.equal(await pageDirty(page), true, 'still unsaved');
        assert.equal(typedSource(readDisk(lab.root)), before, 'the file as the proposal found it');
      }
      await panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
    });

    test('Accept and run on a notebook with no kernel runs the first time', async () => {
      const page = typist.page;
      const kernels = async () => (await (await lab.api('api/sessions')).json()).filter(x => x.path === 'other.ipynb');
      assert.deepEqual(await kernels(), [], 'other.ipynb has no kernel');
      const panel = await openPanel(page);
      await send(page, 'Add a sum to other');
      const card = panel.locator('.jp-resolve-assistant').last().locator('.jp-resolve-proposal');
      await card.waitFor({ timeout: 120_000 });
      await card.locator('button.jp-resolve-accept-run').click();
      await card.locator('.jp-resolve-proposal-status', { hasText: /accepted \(ran\)/ }).waitFor({ timeout: 120_000 });
      await page.locator('.jp-NotebookPanel .jp-OutputArea-output', { hasText: '45' }).first().waitFor();
      assert.equal(await panel.locator('.jp-resolve-banner').count(), 0, 'no error');
    });

    test('a run started in one page shows in the other, live', async () => {
      const [a, b] = [promoter.page, typist.page];
      const panelA = await openPanel(a);
      await panelA.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
      await panelA.locator('button', { hasText: 'New session' }).click();
      await send(a, 'Hello from the first page');
      const first = panelA.locator('.jp-resolve-assistant').last();
      await first.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
      const runId = await first.getAttribute('data-run-id');
      const { runs } = await (await lab.api('resolve/api/runs')).json();
      const sessionId = runs.find(r => r.run_id === runId).session_id;
      // the other page shows that session (it is idle there), then the first page asks again
      const panelB = await openPanel(b);
      await panelB.locator('.jp-resolve-tab', { hasText: 'Sessions' }).click();
      await panelB.locator(`.jp-resolve-row[data-session-id="${sessionId}"]`).click();
      await panelB.locator(`.jp-resolve-assistant[data-run-id="${runId}"]`).waitFor();
      const shownBefore = await panelB.locator('.jp-resolve-assistant').count();
      await send(a, 'Propose a note for the other notebook');
      // the other page picks the run up without reopening anything: its message, its text,
      // the tool card and the proposal waiting for a decision
      const live = panelB.locator('.jp-resolve-assistant').nth(shownBefore);
      const card = live.locator('.jp-resolve-proposal');
      await card.waitFor({ timeout: 120_000 });
      assert.equal(await card.locator('.jp-resolve-proposal-status').innerText(), 'waiting for your review');
      await live.locator('.jp-resolve-tool-name', { hasText: 'notebook_propose' }).waitFor();
      await live.getByText('Here is a note.').waitFor();
      assert.equal(
        await panelB.locator('.jp-resolve-user').nth(shownBefore).innerText(),
        'Propose a note for the other notebook'
      );
      await shot(panelB, `collab-live-other-page-${variant.collaborative}`);
      // deciding there reaches the page that asked
      await card.locator('button.jp-resolve-reject').click();
      await card.locator('button.jp-resolve-reject-confirm').click();
      const cardA = panelA.locator('.jp-resolve-assistant').last().locator('.jp-resolve-proposal');
      await cardA.locator('.jp-resolve-proposal-status', { hasText: /rejected/ }).waitFor({ timeout: 60_000 });
      await live.locator('.jp-resolve-footer', { hasText: 'done' }).waitFor({ timeout: 120_000 });
      await live.getByText('Noted.').waitFor(); // the text renders a moment after the footer
      assert.equal(await panelB.locator('.jp-resolve-assistant').count(), shownBefore + 1, 'attached once');
      assert.deepEqual(typist.errors, []);
    });
  });
}
