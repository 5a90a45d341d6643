/** An artifact row's provenance actions: Export (its RO-Crate) and Reproduce, whose verdict
 * shows on the row (issue 49.4). */
import * as React from 'react';
import * as provenance from '../provenance-api';
import {
  crateFilename,
  IReproduction,
  reproductionDetail,
  reproductionLine
} from '../provenance';
import { describeError } from '../request';

/** Save a blob as a download (the page's own link, then let go). */
function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `expanded`: the row is open, so its last reproduction is asked for (not for every row). */
export function ArtifactActions(props: {
  readonly artifactId: string;
  readonly expanded: boolean;
}): JSX.Element {
  const id = props.artifactId;
  const [busy, setBusy] = React.useState<'export' | 'reproduce' | null>(null);
  const [result, setResult] = React.useState<IReproduction | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  React.useEffect(() => {
    let live = true;
    if (!props.expanded || result) {
      return;
    }
    provenance.lastReproduction(id).then(
      last => live && setResult(last),
      () => undefined // an older server, or none kept: the row shows nothing
    );
    return () => {
      live = false;
    };
  }, [id, props.expanded]);
  const act = async (what: 'export' | 'reproduce'): Promise<void> => {
    setBusy(what);
    setError(null);
    try {
      if (what === 'export') {
        download(await provenance.crate(id), crateFilename(id));
      } else {
        setResult(await provenance.reproduce(id));
      }
    } catch (e) {
      setError(describeError(e, what === 'export' ? 'Export' : 'Reproduce'));
    } finally {
      setBusy(null);
    }
  };
  const detail = result ? reproductionDetail(result) : null;
  return (
    <div className="jp-resolve-artifact-actions">
      <button
        className="jp-resolve-link"
        disabled={busy !== null}
        title="Download its RO-Crate: the bytes, the calls that made it, who and when"
        onClick={() => void act('export')}
      >
        {busy === 'export' ? 'Exporting…' : 'Export'}
      </button>
      <button
        className="jp-resolve-link"
        disabled={busy !== null}
        title="Run the calls that made it again in a fresh scratch kernel and compare"
        onClick={() => void act('reproduce')}
      >
        {busy === 'reproduce' ? 'Reproducing…' : 'Reproduce'}
      </button>
      {error && <div className="jp-resolve-error">{error}</div>}
      {result && busy !== 'reproduce' && (
        <div
          className={`jp-resolve-reproduction ${result.reproduced ? 'jp-mod-same' : 'jp-mod-differs'}`}
          title={result.endedAt ? `reproduced at ${result.endedAt}` : undefined}
        >
          {reproductionLine(result)}
          {detail && <pre className="jp-resolve-reproduction-detail">{detail}</pre>}
        </div>
      )}
    </div>
  );
}
