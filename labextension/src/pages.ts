/**
 * Reading a paged listing (`GET resolve/api/runs` pages newest first: `{runs, next}`, `next`
 * the cursor of the page after, null on the last). Pure: the page request is passed in.
 */

/** One page: its rows and the cursor of the next page (null: this was the last). */
export interface IPage<T> {
  readonly rows: T[];
  readonly next: string | null;
}

/**
 * The rows of the first `pages` pages (all of them by default), in the server's order. A server
 * that repeats a cursor is not followed round in a circle; one without paging answers one page.
 */
export async function readPages<T>(
  fetchPage: (before: string | null) => Promise<IPage<T>>,
  pages = Infinity
): Promise<T[]> {
  const rows: T[] = [];
  const seen = new Set<string>();
  let before: string | null = null;
  for (let read = 0; read < pages; read++) {
    const page: IPage<T> = await fetchPage(before);
    rows.push(...page.rows);
    if (!page.next || seen.has(page.next)) {
      break;
    }
    seen.add(page.next);
    before = page.next;
  }
  return rows;
}

/** A page as a listing reads it: `indexing` when the server's run index is still being rebuilt. */
export interface IListingPage<T> extends IPage<T> {
  readonly indexing: boolean;
}

/** What a paged listing shows: the rows so far, and whether more can be loaded. */
export interface IListingState<T> {
  readonly rows: readonly T[];
  /** False once a page came back without a next cursor (or repeated one). */
  readonly more: boolean;
  readonly loading: boolean;
  /** The latest page said the server is still indexing older runs. */
  readonly indexing: boolean;
  readonly error: string | null;
}

/**
 * A listing loaded a page at a time (the panel's Runs and Sessions tabs): `more()` appends the
 * next page, at most one request at a time; `reset()` starts over, and a page asked for before
 * a reset is dropped when it arrives. Rows already shown (same key) are not shown twice, as a
 * row can move to a later page while the listing is read. Pure: the page request is passed in.
 */
export class PagedListing<T> {
  constructor(
    private readonly _fetchPage: (before: string | null) => Promise<IListingPage<T>>,
    private readonly _key: (row: T) => string,
    private readonly _changed: (state: IListingState<T>) => void = () => undefined
  ) {}

  get state(): IListingState<T> {
    return this._state;
  }

  /** Load the next page (the first after a reset); nothing while one is loading or at the end. */
  async more(): Promise<void> {
    if (this._state.loading || !this._state.more) {
      return;
    }
    const generation = this._generation;
    this._set({ loading: true, error: null });
    try {
      const page = await this._fetchPage(this._next);
      if (generation !== this._generation) {
        return;
      }
      const rows = page.rows.filter(r => !this._keys.has(this._key(r)));
      rows.forEach(r => this._keys.add(this._key(r)));
      const repeated = page.next !== null && this._cursors.has(page.next);
      if (page.next) {
        this._cursors.add(page.next);
      }
      this._next = page.next;
      this._set({
        rows: [...this._state.rows, ...rows],
        more: page.next !== null && !repeated,
        loading: false,
        indexing: page.indexing
      });
    } catch (e) {
      if (generation === this._generation) {
        this._set({ loading: false, error: String((e as Error)?.message ?? e) });
      }
    }
  }

  /** Forget every page and load the first again. */
  reset(): Promise<void> {
    this._generation++;
    this._keys.clear();
    this._cursors.clear();
    this._next = null;
    this._set({ rows: [], more: true, loading: false, indexing: false, error: null });
    return this.more();
  }

  private _set(change: Partial<IListingState<T>>): void {
    this._state = { ...this._state, ...change };
    this._changed(this._state);
  }

  private _state: IListingState<T> = {
    rows: [],
    more: true,
    loading: false,
    indexing: false,
    error: null
  };
  private _next: string | null = null;
  private _generation = 0;
  private readonly _keys = new Set<string>();
  private readonly _cursors = new Set<string>();
}
