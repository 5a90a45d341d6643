// A recording fake model provider for the browser tests: an OpenAI-compatible
// `POST /v1/chat/completions` that streams what the test scripts (text and tool calls, on the
// real wire: SSE chunks, tool-call arguments in pieces, a usage chunk, [DONE]) and keeps every
// request body, so a test can assert what the model was sent. Loopback only.
import { createServer } from 'node:http';

/**
 * Start the fake. `reply(body, n)` answers request `n` (0-based) with `{content?, tool_calls?:
 * [{name, arguments}], usage?, gap_ms?, tool_gap_ms?, tool_wait?}` (`usage` replaces the default
 * usage chunk, e.g. with cache counts; `gap_ms` spaces the text's pieces that far apart, as a
 * real model streams; `tool_gap_ms` the pieces of a call's arguments, as a small local model
 * writes them; `tool_wait`, a promise, holds a call after its first piece until it settles).
 * `GET /v1/models` lists `models` (ids), or answers 500 while `fake.failModels` is set.
 * Returns {baseUrl, requests, failModels, close()}; `requests` holds the parsed bodies.
 */
export async function startFakeOpenAI(reply, { models = [] } = {}) {
  const requests = [];
  let calls = 0;
  const fake = { failModels: false };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', d => (raw += d));
    req.on('end', async () => {
      if (req.method === 'GET' && req.url.endsWith('/models')) {
        const [status, body] = fake.failModels
          ? [500, { error: { message: 'the model list is down', type: 'server_error' } }]
          : [200, { object: 'list', data: models.map(id => ({ id, object: 'model', owned_by: 'fake' })) }];
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
        return;
      }
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const body = JSON.parse(raw);
      requests.push(body);
      const turn = reply(body, requests.length - 1) ?? { content: 'ok' };
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      const chunk = (delta, finish = null) =>
        `data: ${JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion.chunk',
          created: 1700000000,
          model: body.model,
          choices: [{ index: 0, delta, finish_reason: finish }]
        })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      if (turn.content) {
        for (const piece of turn.content.match(/[\s\S]{1,16}/g)) {
          if (turn.gap_ms) await new Promise(ok => setTimeout(ok, turn.gap_ms));
          res.write(chunk({ content: piece }));
        }
      }
      for (const [index, call] of (turn.tool_calls ?? []).entries()) {
        const id = `call_fake_${++calls}`;
        const args = JSON.stringify(call.arguments ?? {});
        res.write(chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }));
        for (const [i, piece] of (args.match(/[\s\S]{1,24}/g) ?? []).entries()) {
          if (i === 1 && turn.tool_wait) await turn.tool_wait;
          if (i && turn.tool_gap_ms) await new Promise(ok => setTimeout(ok, turn.tool_gap_ms));
          res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
        }
      }
      res.write(chunk({}, turn.tool_calls?.length ? 'tool_calls' : 'stop'));
      res.write(
        `data: ${JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion.chunk',
          created: 1700000000,
          model: body.model,
          choices: [],
          usage: turn.usage ?? { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }
        })}\n\n`
      );
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise(ok => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise(ok => server.close(ok))
  });
}

/** The text of a chat message's content (a string or content parts). */
export function textOf(message) {
  const c = message?.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(p => p?.text ?? '').join('');
  return '';
}

/** The server config that points jupyter-resolve at `fake` (an OpenAI-compatible provider). */
export function serverConfigFor(fake) {
  return [
    "c.Resolve.provider = 'openai'",
    `c.Resolve.base_url = '${fake.baseUrl}'`,
    "c.Resolve.model = 'gpt-4o-mini'",
    "c.Resolve.api_key_env = 'RESOLVE_FAKE_KEY'",
    ''
  ].join('\n');
}
