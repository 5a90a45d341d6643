/**
 * A listing that loads a page at a time as it is scrolled (the Runs and Sessions tabs): a
 * "Load more" button ends the list, pressed by hand or when it scrolls into view.
 */
import * as React from 'react';
import { IListingPage, IListingState, PagedListing } from '../pages';

/** The listing's state, loading its first page on mount; `reload` starts again. */
export function usePaged<T>(
  fetchPage: (before: string | null) => Promise<IListingPage<T>>,
  key: (row: T) => string
): [IListingState<T>, PagedListing<T>] {
  const [state, setState] = React.useState<IListingState<T> | null>(null);
  const listing = React.useMemo(() => new PagedListing(fetchPage, key, s => setState(s)), []);
  React.useEffect(() => void listing.reset(), []);
  return [state ?? listing.state, listing];
}

/** The end of a paged list: "Load more" (also pressed when it comes into view) or a note. */
export function LoadMore<T>(props: {
  readonly listing: PagedListing<T>;
  readonly state: IListingState<T>;
  /** What a row is, plural and singular: "runs", "run". */
  readonly noun: string;
  readonly one: string;
}): JSX.Element | null {
  const { listing, state } = props;
  const button = React.useRef<HTMLButtonElement>(null);
  React.useEffect(() => {
    const node = button.current;
    // after an error the person retries by hand: no loop of failing requests while in view
    if (!node || !state.more || state.error || typeof IntersectionObserver === 'undefined') {
      return;
    }
    const observer = new IntersectionObserver(entries => {
      if (entries.some(e => e.isIntersecting)) {
        void listing.more();
      }
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [state.more, state.error, state.rows.length, state.loading]);
  return (
    <div className="jp-resolve-list-end">
      {state.indexing && (
        <div className="jp-resolve-row-meta jp-resolve-indexing" role="note">
          Older runs are still being indexed; refresh in a moment to see them.
        </div>
      )}
      {state.more && (
        <button
          ref={button}
          className="jp-mod-styled jp-resolve-load-more"
          disabled={state.loading}
          onClick={() => void listing.more()}
        >
          {state.loading ? 'Loading…' : state.error ? 'Retry' : `Load more ${props.noun}`}
        </button>
      )}
      {!state.more && state.rows.length > 0 && (
        <div className="jp-resolve-row-meta jp-resolve-list-all">
          All {state.rows.length} {state.rows.length === 1 ? props.one : props.noun} shown.
        </div>
      )}
    </div>
  );
}
