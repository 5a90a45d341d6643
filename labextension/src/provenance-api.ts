/** The provenance requests of an artifact row: its RO-Crate, reproducing it, its last one. */
import { postJSON, requestJSON, requestRaw, ResolveRequestError } from './request';
import { IReproduction, validateReproduction } from './provenance';
import { ShapeError } from './shapes';

function path(id: string, what: string): string {
  return `artifacts/${encodeURIComponent(id)}/${what}`;
}

function checked(body: unknown): IReproduction {
  const result = validateReproduction(body);
  if (!result) {
    throw new ShapeError('reproduction: expected {reproduced, ...}');
  }
  return result;
}

/** `GET resolve/api/artifacts/{id}/crate`: the RO-Crate zip. */
export async function crate(id: string): Promise<Blob> {
  return (await requestRaw(path(id, 'crate'))).blob();
}

/** `POST resolve/api/artifacts/{id}/reproduce`. */
export async function reproduce(id: string): Promise<IReproduction> {
  return checked(await postJSON(path(id, 'reproduce'), {}));
}

/** `GET resolve/api/artifacts/{id}/reproduce`: the last reproduction, null when none. */
export async function lastReproduction(id: string): Promise<IReproduction | null> {
  try {
    return checked(await requestJSON(path(id, 'reproduce')));
  } catch (error) {
    if (error instanceof ResolveRequestError && error.status === 404) {
      return null;
    }
    throw error;
  }
}
