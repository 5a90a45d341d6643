/**
 * The completion endpoint (DESIGN 10.3): `POST resolve/api/completion` with `stream: true`
 * answers `completion.delta` {text} frames then one `completion.done` {model, ms}. Through the
 * one request wrapper and the SSE parser the run streams use.
 */
import { requestRaw, ResolveRequestError } from '../request';
import { SSEParser } from '../sse-parser';

/** The body of a completion request. */
export interface ICompletionBody {
  readonly prefix: string;
  readonly suffix: string;
  readonly language: string;
  readonly path?: string;
  readonly cell_id?: string;
  readonly model?: string;
}

/** What the stream says as it goes. */
export interface ICompletionCallbacks {
  onDelta(text: string): void;
  onDone(info: { model?: string; ms?: number }): void;
}

function parseData(data: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    throw new ResolveRequestError('completion: a frame is not JSON', 200, 'bad_frame');
  }
}

/** Dispatch one frame; true once the stream is done. */
function onFrame(event: string, data: string, callbacks: ICompletionCallbacks): boolean {
  const body = parseData(data);
  if (event === 'completion.delta') {
    callbacks.onDelta(typeof body.text === 'string' ? body.text : '');
    return false;
  }
  if (event === 'completion.done') {
    callbacks.onDone({
      model: typeof body.model === 'string' ? body.model : undefined,
      ms: typeof body.ms === 'number' ? body.ms : undefined
    });
    return true;
  }
  if (event === 'error' || event === 'completion.error') {
    const message = typeof body.message === 'string' ? body.message : 'the completion failed';
    throw new ResolveRequestError(message, 200, String(body.code ?? 'completion_error'));
  }
  return false; // a frame type added later: ignored
}

/** Stream one completion; resolves when `completion.done` arrives, rejects on an error. */
export async function streamCompletion(
  body: ICompletionBody,
  callbacks: ICompletionCallbacks,
  signal?: AbortSignal
): Promise<void> {
  const response = await requestRaw('completion', {
    method: 'POST',
    body: JSON.stringify({ ...body, stream: true }),
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    signal
  });
  if (!response.body) {
    throw new ResolveRequestError('the completion stream has no body', response.status, 'no_body');
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SSEParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        throw new ResolveRequestError('the completion stream ended early', 200, 'stream_ended');
      }
      for (const frame of parser.feed(value)) {
        if (onFrame(frame.event, frame.data, callbacks)) {
          return;
        }
      }
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}
