/**
 * The completion endpoint (DESIGN 10.3): `POST resolve/api/completion` with `stream: true`
 * answers `completion.delta` {text} frames then one `completion.done` {model, ms}. Through the
 * one request wrapper and the SSE parser the run streams use.
 */
import { requestRaw, ResolveRequestError } from '../request';
import { SSEParser } from '../sse-parser';
import { ICompletionCallbacks, onCompletionFrame } from './pending';

/** The body of a completion request. */
export interface ICompletionBody {
  readonly prefix: string;
  readonly suffix: string;
  readonly language: string;
  readonly path?: string;
  readonly cell_id?: string;
  readonly model?: string;
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
        if (onCompletionFrame(frame.event, frame.data, callbacks)) {
          return;
        }
      }
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}
