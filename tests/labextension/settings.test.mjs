// The panel's settings (labextension/src/settings.ts) against its schema (labextension/schema).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { settings as S } from './load.mjs';

const SCHEMA = JSON.parse(
  readFileSync(new URL('../../labextension/schema/panel.json', import.meta.url), 'utf8')
);

test('the defaults are the schema defaults, and every schema property is read', () => {
  const defaults = Object.fromEntries(
    Object.entries(SCHEMA.properties).map(([key, p]) => [key, p.default])
  );
  assert.deepEqual({ ...S.DEFAULT_SETTINGS }, defaults);
  assert.deepEqual(S.parseSettings(defaults), S.DEFAULT_SETTINGS);
  assert.deepEqual(SCHEMA.properties.sendKey.enum, ['Enter', 'Ctrl+Enter']);
  assert.equal(SCHEMA['jupyter.lab.setting-icon'], 'jupyter-resolve:icon');
});

test('a composite is read as is when it has the right types', () => {
  assert.deepEqual(
    S.parseSettings({ defaultSoul: ' critic ', sendKey: 'Ctrl+Enter', showReasoning: false }),
    { defaultSoul: 'critic', sendKey: 'Ctrl+Enter', showReasoning: false }
  );
});

test('a value of the wrong type or unknown falls back to its default', () => {
  for (const raw of [null, undefined, 'x', [], {}]) {
    assert.deepEqual(S.parseSettings(raw), S.DEFAULT_SETTINGS);
  }
  assert.deepEqual(
    S.parseSettings({ defaultSoul: 3, sendKey: 'Alt+Enter', showReasoning: 'no', extra: 1 }),
    S.DEFAULT_SETTINGS
  );
});

const press = (key, mods = {}) => ({
  key,
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  isComposing: false,
  ...mods
});

test('Enter sends; Shift+Enter breaks the line', () => {
  assert.equal(S.sends(press('Enter'), 'Enter'), true);
  assert.equal(S.sends(press('Enter', { ctrlKey: true }), 'Enter'), true);
  assert.equal(S.sends(press('Enter', { shiftKey: true }), 'Enter'), false);
  assert.equal(S.sends(press('Enter', { isComposing: true }), 'Enter'), false);
  assert.equal(S.sends(press('a'), 'Enter'), false);
  assert.match(S.composerHint('Enter'), /Enter sends, Shift\+Enter breaks the line/);
});

test('Ctrl+Enter (or Cmd+Enter) sends; Enter breaks the line', () => {
  assert.equal(S.sends(press('Enter'), 'Ctrl+Enter'), false);
  assert.equal(S.sends(press('Enter', { shiftKey: true }), 'Ctrl+Enter'), false);
  assert.equal(S.sends(press('Enter', { ctrlKey: true }), 'Ctrl+Enter'), true);
  assert.equal(S.sends(press('Enter', { metaKey: true }), 'Ctrl+Enter'), true);
  assert.equal(S.sends(press('Enter', { ctrlKey: true, isComposing: true }), 'Ctrl+Enter'), false);
  assert.match(S.composerHint('Ctrl+Enter'), /Ctrl\+Enter sends, Enter breaks the line/);
});
