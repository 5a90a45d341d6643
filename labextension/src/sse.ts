/**
 * A fetch-based server-sent events reader over `ServerConnection` (so auth and XSRF apply to
 * streams too). It sends `Last-Event-ID` itself — browsers only do that for `EventSource` — and,
 * when a stream breaks before `run.completed`, reconnects from the last id it saw.
 */
import { requestRaw, ResolveRequestError } from './request';
import { SSEParser } from './sse-parser';
import { IRunEvent, validateEvent } from './events';

/** Options of {@link streamRun}. */
export interface IStreamOptions {
  /** The first request: `chat` (POST) or `runs/{id}/events` (GET). */
  readonly path: string;
  readonly init?: RequestInit;
  /** Resume after this event id (sent as `Last-Event-ID`). */
  readonly lastEventId?: number;
  readonly signal?: AbortSignal;
  /** Called for each valid event, in order. */
  readonly onEvent: (event: IRunEvent) => void;
  /** Called for a frame that fails validation (it is skipped). */
  readonly onInvalid?: (error: Error) => void;
  /** How many times a broken stream is resumed before giving up. */
  readonly retries?: number;
  /** A run stream (ends with `run.completed`) or a task stream (ends with `task.completed`). */
  readonly kind?: 'run' | 'task';
}

/**
 * Read a run's events to its `run.completed`. A POST to `chat` that breaks after the run started
 * is resumed with `GET runs/{id}/events` and `Last-Event-ID`. Resolves with the last event id.
 */
export async function streamRun(options: IStreamOptions): Promise<number> {
  let lastId = options.lastEventId ?? 0;
  let runId: string | null = null;
  let path = options.path;
  let init: RequestInit = options.init ?? {};
  let retries = options.retries ?? 5;
  const kind = options.kind ?? 'run';
  const terminal = kind === 'task' ? 'task.completed' : 'run.completed';
  const idHeader = kind === 'task' ? 'X-Resolve-Task-Id' : 'X-Resolve-Run-Id';
  for (;;) {
    let completed = false;
    try {
      const headers = new Headers(init.headers);
      if (lastId > 0) {
        headers.set('Last-Event-ID', String(lastId));
      }
      headers.set('Accept', 'text/event-stream');
      const response = await requestRaw(path, { ...init, headers, signal: options.signal });
      runId = response.headers.get(idHeader) ?? runId;
      if (!response.body) {
        throw new ResolveRequestError('the stream has no body', response.status, 'no_body');
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SSEParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          break;
        }
        for (const frame of parser.feed(value)) {
          let event: IRunEvent;
          try {
            event = validateEvent(frame.id, frame.event, frame.data);
          } catch (error) {
            options.onInvalid?.(error as Error);
            continue;
          }
          if (Number.isFinite(event.seq)) {
            if (event.seq <= lastId) {
              continue; // already seen (a resumed stream never repeats, but be safe)
            }
            lastId = event.seq;
          }
          if (kind === 'run') {
            runId = event.data.run_id;
          } else if (typeof event.data.task_id === 'string') {
            runId = event.data.task_id;
          }
          options.onEvent(event);
          if (event.type === terminal) {
            completed = true;
          }
        }
      }
    } catch (error) {
      if (options.signal?.aborted || (error as Error)?.name === 'AbortError') {
        return lastId;
      }
      if (error instanceof ResolveRequestError && error.status >= 400 && error.status < 500) {
        throw error;
      }
      if (runId === null || retries <= 0) {
        throw error;
      }
    }
    if (completed || options.signal?.aborted) {
      return lastId;
    }
    if (runId === null || retries-- <= 0) {
      throw new ResolveRequestError('the event stream ended before the run completed', 0, 'eof');
    }
    await new Promise(resolve => setTimeout(resolve, 500));
    path = `${kind === 'task' ? 'tasks' : 'runs'}/${encodeURIComponent(runId)}/events`;
    init = { method: 'GET' };
  }
}
