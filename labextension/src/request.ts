/**
 * The one place that talks to the server: every call goes through
 * `ServerConnection.makeRequest` with a path relative to the page's base URL,
 * so cookie auth, the XSRF header and JupyterHub prefixes are handled by JupyterLab.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** The API prefix under the server's base URL. */
export const API_PREFIX = 'resolve/api';

/** A failed call: the HTTP status plus the gateway's `{code, message}` when it sent one. */
export class ResolveRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string = 'error',
    /** The answer's JSON body, when it had one (e.g. a 409's `current`); check before use. */
    readonly body: unknown = null
  ) {
    super(message);
    this.name = 'ResolveRequestError';
  }

  /** True when the endpoint does not exist on this server (a feature not installed yet). */
  get notAvailable(): boolean {
    return this.status === 404 && this.code === 'http_404';
  }
}

/** The full URL of an API path such as `runs/abc/events`. */
export function apiUrl(
  path: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  return URLExt.join(settings.baseUrl, API_PREFIX, path);
}

/**
 * Send a request and return the raw response once its status is OK (for streams).
 * Network failures and non-2xx answers become a {@link ResolveRequestError}.
 */
export async function requestRaw(
  path: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<Response> {
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(apiUrl(path, settings), init, settings);
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') {
      throw error;
    }
    throw new ResolveRequestError(
      `The server could not be reached: ${(error as Error)?.message ?? error}`,
      0,
      'network'
    );
  }
  if (!response.ok) {
    throw await errorFrom(response, path);
  }
  return response;
}

/** Send a request and parse its JSON answer. */
export async function requestJSON<T = unknown>(
  path: string,
  init: RequestInit = {},
  settings?: ServerConnection.ISettings
): Promise<T> {
  const response = await requestRaw(path, init, settings);
  const text = await response.text();
  if (!text) {
    return {} as T;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ResolveRequestError(`${path}: the answer is not JSON`, response.status, 'bad_json');
  }
}

/** POST a JSON body. */
export function postJSON<T = unknown>(
  path: string,
  body: unknown,
  settings?: ServerConnection.ISettings
): Promise<T> {
  return requestJSON<T>(
    path,
    {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' }
    },
    settings
  );
}

async function errorFrom(response: Response, path: string): Promise<ResolveRequestError> {
  let code = 'http_' + response.status;
  let message = `${response.status} ${response.statusText}`.trim();
  let body: unknown = null;
  try {
    const parsed = await response.json();
    body = parsed;
    const err = parsed?.error ?? parsed;
    if (typeof err?.code === 'string') {
      code = err.code;
    }
    if (typeof err?.message === 'string' && typeof err?.code === 'string') {
      message = err.message;
    }
  } catch {
    // not JSON: keep the status line
  }
  if (response.status === 404 && code === 'http_404') {
    message = `resolve/api/${path.split('?')[0]} is not available on this server (yet)`;
  }
  return new ResolveRequestError(message, response.status, code, body);
}

/** A message to show about an endpoint that is missing or failing. */
export function describeError(error: unknown, what: string): string {
  if (error instanceof ResolveRequestError) {
    if (error.notAvailable) {
      return `${what} is not available on this server yet (${error.message}).`;
    }
    if (error.status === 403) {
      return `${what}: refused (403) — the page may have lost its login; reload it.`;
    }
    return `${what}: ${error.message}`;
  }
  return `${what}: ${(error as Error)?.message ?? String(error)}`;
}
