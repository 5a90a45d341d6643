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
