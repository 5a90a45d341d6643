// A real `jupyter lab` (login and XSRF on, under a JupyterHub-like base URL) and Debian's
// chromium driven by playwright-core. Shared by the browser tests.
import { spawn } from 'node:child_process';
import { after, afterEach, before } from 'node:test';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '..', '..');
const require = createRequire(join(repo, 'labextension', 'package.json'));
const { chromium } = require('playwright-core');

export const outputDir = join(repo, 'test-output', 'browser');
mkdirSync(outputDir, { recursive: true });

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run'
];

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/**
 * Start `jupyter lab` in a fresh root folder. `files` are written there first; `config` is a
 * jupyter_server_config.py body. `venv` is the virtual environment whose Python runs it (the
 * repository's .venv by default; .venv/collab for jupyter-collaboration, made by `make setup`).
 * Returns {url, base, token, root, api(), stop()}.
 */
export async function startLab({ files = {}, config = '', venv = join(repo, '.venv') } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'resolve-browser-'));
  const home = join(root, '.home');
  mkdirSync(home);
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true }); // e.g. .resolve/runs/<id>.jsonl
    writeFileSync(join(root, name), body);
  }
  // no news or update toasts over the panel
  const settingsDir = join(root, '.lab-settings');
  mkdirSync(settingsDir);
  writeFileSync(
    join(settingsDir, 'overrides.json'),
    JSON.stringify({
      '@jupyterlab/apputils-extension:notification': { fetchNews: 'false', checkForUpdates: false }
    })
  );
  const configDir = join(root, '.jupyter');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'jupyter_server_config.py'), config);
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const baseUrl = '/user/tester/';
  const bin = join(venv, 'bin');
  const child = spawn(
    join(bin, 'python'),
    [
      '-m',
      'jupyterlab',
      '--no-browser',
      '--allow-root',
      `--port=${port}`,
      '--ServerApp.ip=127.0.0.1',
      `--ServerApp.root_dir=${root}`,
      `--ServerApp.base_url=${baseUrl}`,
      `--IdentityProvider.token=${token}`,
      '--ServerApp.disable_check_xsrf=False',
      `--LabApp.workspaces_dir=${join(root, '.workspaces')}`,
      `--LabApp.app_settings_dir=${settingsDir}`,
      '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
      // window.jupyterapp: tests wait on the app's own promises (see settleNotebook)
      '--LabApp.expose_app_in_browser=True'
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        PATH: `${bin}:${join(repo, '.venv', 'bin')}:${process.env.PATH}`,
        JUPYTER_CONFIG_DIR: configDir,
        JUPYTER_RUNTIME_DIR: join(root, '.runtime'),
        HOME: home
      },
      stdio: ['ignore', 'pipe', 'pipe']
    }
  );
  let log = '';
  child.stdout.on('data', d => (log += d));
  child.stderr.on('data', d => (log += d));
  const url = `http://127.0.0.1:${port}${baseUrl}`;
  const api = (path, init = {}) =>
    fetch(url + path, {
      ...init,
      headers: { Authorization: `token ${token}`, ...(init.headers ?? {}) }
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`jupyter lab exited:\n${log}`);
    }
    try {
      const r = await api('api/status');
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`jupyter lab did not start:\n${log}`);
    }
    await new Promise(r => setTimeout(r, 250));
  }
  // bring the gateway and its runtime up before the browser's first message
  await api('resolve/api/health').catch(() => {});
  return {
    url,
    token,
    root,
    api,
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([
          new Promise(r => child.once('exit', r)),
          new Promise(r => setTimeout(r, 8000))
        ]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
  };
}

/** Launch chromium and log in through the login page with the token (a real login). */
export async function openLab(lab, { width = 1280, height = 800 } = {}) {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
  const context = await browser.newContext({
    viewport: { width, height },
    permissions: ['clipboard-read', 'clipboard-write']
  });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000); // 2 shared cores: a first scratch kernel can take a while
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  await page.goto(lab.url + 'login?next=' + encodeURIComponent(new URL(lab.url).pathname + 'lab'));
  await page.fill('input[name="password"]', lab.token);
  await Promise.all([page.waitForURL(/\/lab/), page.click('#login_submit, button[type="submit"]')]);
  await waitForLab(page);
  await dismissToasts(page);
  return { browser, context, page, errors };
}

/** Close any notification toast still showing (they sit over the right sidebar). */
export async function dismissToasts(page) {
  for (const button of await page.locator('.Toastify__close-button').all()) {
    await button.click().catch(() => {});
  }
}

/**
 * Wait until JupyterLab has finished restoring: the file browser is restored and the main area
 * holds its launcher or document. Restoring ends by activating that widget, which takes the
 * keyboard focus; typing before then can land half in the panel, half in the launcher.
 */
export async function waitForLab(page) {
  await page.waitForSelector('#jp-main-dock-panel', { state: 'visible', timeout: 60_000 });
  await page.waitForSelector('.jp-LabShell', { timeout: 60_000 });
  await page.waitForFunction(
    () =>
      document.querySelector('.jp-FileBrowser') !== null &&
      document.querySelector('.jp-FileBrowser.jp-mod-restoring') === null &&
      document.querySelector('#jp-main-dock-panel .jp-Launcher, #jp-main-dock-panel .jp-Document') !== null,
    null,
    { timeout: 60_000 }
  );
}

/**
 * Wait until the open notebook `path` is settled: its kernel connected and the metadata it
 * writes (language_info from the kernel's info, kernelspec from its spec) in the model, then
 * saved, so the notebook is clean. Opening a notebook dirties it a moment later, when the
 * kernel answers; a step that saves or reverts depending on `dirty` races with that.
 */
export async function settleNotebook(page, path) {
  await page.waitForFunction(
    path =>
      [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === path)
        ?.sessionContext?.session?.kernel != null,
    path
  );
  await page.evaluate(async path => {
    const panel = [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === path);
    await panel.context.ready;
    await panel.sessionContext.ready;
    const kernel = panel.sessionContext.session.kernel;
    // the panel's own handlers were attached to these promises first, so they have run
    await kernel.info;
    await kernel.spec;
    if (panel.context.model.dirty) {
      await panel.context.save();
    }
  }, path);
}

/** Open the panel with its shortcut (falls back to the command palette). */
export async function openPanel(page) {
  const panel = page.locator('#jp-resolve-panel');
  if (!(await panel.isVisible())) {
    await page.locator('#jp-main-dock-panel').click({ position: { x: 5, y: 5 } }).catch(() => {});
    await page.keyboard.press('Control+Alt+r');
  }
  await panel.waitFor({ state: 'visible' });
  return panel;
}

/** Type a prompt (Shift+Enter between lines) and send it with Enter. */
export async function send(page, text) {
  const input = page.locator('#jp-resolve-panel textarea.jp-resolve-input');
  if (!(await input.isVisible())) {
    await page.locator('#jp-resolve-panel .jp-resolve-tab', { hasText: 'Chat' }).click();
  }
  await input.click();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (i) await page.keyboard.press('Shift+Enter');
    await page.keyboard.type(lines[i]);
  }
  // every key must have reached the message box: anything else took the focus mid-typing
  const typed = await input.inputValue();
  if (typed !== text) {
    const focus = await page.evaluate(() => document.activeElement?.className ?? 'nothing');
    throw new Error(`the message box holds ${JSON.stringify(typed)}; the focus is on "${focus}"`);
  }
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    () => document.querySelector('#jp-resolve-panel textarea.jp-resolve-input')?.value === '',
    null,
    { timeout: 10_000 }
  );
}

/**
 * Wait until the workspace on the server holds the panel's state under `key` (and `check(value)`
 * holds): JupyterLab saves its state database with the workspace half a second after the last
 * change, so a reload sooner would find the state of before.
 */
export async function waitForSavedState(lab, key, check = () => true, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const workspace = await (await lab.api('lab/api/workspaces/default')).json();
    const value = workspace.data?.[key];
    if (value !== undefined && check(value)) return;
    if (Date.now() > deadline) throw new Error(`the workspace has no ${key} after ${timeout} ms`);
    await new Promise(r => setTimeout(r, 100));
  }
}

/** Drag the right sidebar's split handle so the panel is `width` px wide. */
export async function sidebarWidth(page, width) {
  const panel = page.locator('#jp-resolve-panel');
  for (let i = 0; i < 3; i++) {
    const box = await panel.boundingBox();
    if (Math.abs(box.width - width) <= 2) return;
    const handle = page.locator('#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)').last();
    const grip = await handle.boundingBox();
    const x = grip.x + grip.width / 2;
    const y = grip.y + grip.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + box.width - width, y, { steps: 5 });
    await page.mouse.up();
  }
  const box = await panel.boundingBox();
  assert.ok(Math.abs(box.width - width) <= 2, `the panel is ${box.width} px wide, not ${width}`);
}

export async function shot(target, name) {
  await target.screenshot({ path: join(outputDir, `${name}.png`) });
}

/**
 * One `jupyter lab` and one logged-in browser for a describe() block: started before its
 * tests, stopped after them; a failed test leaves a screenshot of the whole page.
 * Returns {lab, session}, filled in once `before` has run.
 */
export function labForSuite(options = {}) {
  const suite = { lab: null, session: null };
  before(async () => {
    suite.lab = await startLab(options);
    suite.session = await openLab(suite.lab);
  });
  afterEach(async t => {
    if (t.passed === false && suite.session) {
      const name = `failed-${t.name.replace(/\W+/g, '-').slice(0, 40)}`;
      await shot(suite.session.page, name).catch(() => {});
    }
  });
  after(async () => {
    await suite.session?.browser.close();
    await suite.lab?.stop();
  });
  return suite;
}
