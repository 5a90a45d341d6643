// Remote images as links (issue 14, item 12): which image sources load (labextension/src/media.ts).
// The DOM rewrite itself runs in chromium: tests/browser/payloads.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { media } from './load.mjs';

const PAGE = 'http://127.0.0.1:8888/user/tester/lab/tree/demo.ipynb';

test('data:, blob: and same-origin sources load', () => {
  for (const src of [
    'data:image/png;base64,iVBORw0KGgo=',
    'blob:http://127.0.0.1:8888/0b1e',
    'files/plot.png',
    '/user/tester/files/plot.png',
    'http://127.0.0.1:8888/user/tester/files/plot.png'
  ]) {
    assert.equal(media.isInlineSource(src, PAGE), true, src);
  }
});

test('every other source is remote', () => {
  for (const src of [
    'https://evil.test/pixel.png?secret=1',
    '//evil.test/pixel.png',
    '\\\\evil.test/pixel.png',
    '/\\evil.test/pixel.png',
    ' https://evil.test/x',
    'ht\ttps://evil.test/x',
    'http://127.0.0.1:9999/x.png',
    'https://127.0.0.1:8888/x.png',
    'ftp://evil.test/x.png',
    'http://[::1'
  ]) {
    assert.equal(media.isInlineSource(src, PAGE), false, src);
  }
});
