// The incremental text/event-stream parser (labextension/src/sse-parser.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sseParser } from './load.mjs';

const STREAM =
  ': keep-alive\n\n' +
  'id: 1\nevent: run.started\ndata: {"run_id":"r"}\n\n' +
  'id: 2\r\nevent: text.delta\r\ndata:{"run_id":"r",\r\ndata: "text":"a"}\r\n\r\n' +
  'event: x\ndata\n\n';

test('frames come out whole, however the text is split', () => {
  const whole = new sseParser.SSEParser().feed(STREAM);
  assert.deepEqual(whole, [
    { id: '1', event: 'run.started', data: '{"run_id":"r"}' },
    { id: '2', event: 'text.delta', data: '{"run_id":"r",\n"text":"a"}' },
    { id: null, event: 'x', data: '' }
  ]);
  for (let size = 1; size <= 7; size++) {
    const parser = new sseParser.SSEParser();
    const frames = [];
    for (let i = 0; i < STREAM.length; i += size) frames.push(...parser.feed(STREAM.slice(i, i + size)));
    assert.deepEqual(frames, whole, `split every ${size} characters`);
  }
});

test('a frame is not emitted before its blank line, and a comment-only frame never', () => {
  const parser = new sseParser.SSEParser();
  assert.deepEqual(parser.feed('id: 3\nevent: usage\ndata: {}\n'), []);
  assert.deepEqual(parser.feed(':ping\n\n'), [{ id: '3', event: 'usage', data: '{}' }]);
  assert.deepEqual(parser.feed(':only a comment\n\n'), []);
});
