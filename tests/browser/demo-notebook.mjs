// The notebook two pages share in collab.test.mjs (demo.ipynb): reading it in a page (its
// model, unsaved typing included) and on disk, and typing into its cells.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The open demo.ipynb of a page, as JSON (its model, unsaved typing included). */
export const pageNotebook = page =>
  page.evaluate(() => {
    const nb = [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb');
    return nb.context.model.toJSON();
  });

export const sourceOf = (notebook, id) => {
  const source = notebook.cells.find(c => c.id === id).source;
  return Array.isArray(source) ? source.join('') : source;
};
/** The source of the second cell, the one typed into and replaced. */
export const typedSource = notebook => sourceOf(notebook, 'cell-typing');
export const readDisk = root => JSON.parse(readFileSync(join(root, 'demo.ipynb'), 'utf8'));

/** Whether a page's demo.ipynb has changes not saved. */
export const pageDirty = page =>
  page.evaluate(
    () => [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb').context.model.dirty
  );

/** Wait until the typed cell (the second) of page's notebook reads `typed`. */
export const waitForTyped = (page, typed) =>
  page.waitForFunction(
    typed => [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb')
      .context.model.sharedModel.cells[1].getSource() === typed,
    typed
  );

/** Poll the saved file until check(notebook) holds (the room saves a moment after a change). */
export async function waitForDisk(root, check, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const notebook = readDisk(root);
    if (check(notebook) || Date.now() > deadline) return notebook;
    await new Promise(r => setTimeout(r, 250));
  }
}

/** Type `text` at the end of cell `index` of page's notebook (unsaved). */
export async function appendToCell(page, index, text) {
  await page.locator('.jp-Cell').nth(index).locator('.jp-InputArea-editor').click();
  await page.keyboard.press('End');
  await page.keyboard.type(text);
}

/** Reload page's demo.ipynb from disk (File > Reload Notebook from Disk). */
export const reloadFromDisk = page =>
  page.evaluate(() =>
    [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === 'demo.ipynb').context.revert()
  );
