/** The text/event-stream format, parsed incrementally (pure: no I/O). */

/** One raw SSE frame. */
export interface IFrame {
  readonly id: string | null;
  readonly event: string;
  readonly data: string;
}

/**
 * Incremental SSE parser: feed it text chunks split anywhere, get complete frames back.
 * Comment lines (`:` keep-alives) are skipped; `data:` may lack the space.
 */
export class SSEParser {
  private _buffer = '';
  private _id: string | null = null;
  private _event = '';
  private _data: string[] = [];

  /** Parse a chunk and return the frames it completed. */
  feed(chunk: string): IFrame[] {
    this._buffer += chunk;
    const frames: IFrame[] = [];
    let newline: number;
    while ((newline = this._buffer.search(/\r\n|\r|\n/)) >= 0) {
      if (newline === this._buffer.length - 1 && this._buffer.endsWith('\r')) {
        break; // a CR last in the chunk may be half of a CRLF: wait for the next chunk
      }
      const line = this._buffer.slice(0, newline);
      const width = this._buffer.startsWith('\r\n', newline) ? 2 : 1;
      this._buffer = this._buffer.slice(newline + width);
      if (line === '') {
        if (this._data.length) {
          frames.push({ id: this._id, event: this._event || 'message', data: this._data.join('\n') });
        }
        this._event = '';
        this._data = [];
        this._id = null;
        continue;
      }
      if (line.startsWith(':')) {
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) {
        value = value.slice(1);
      }
      if (field === 'id') {
        this._id = value;
      } else if (field === 'event') {
        this._event = value;
      } else if (field === 'data') {
        this._data.push(value);
      }
    }
    return frames;
  }
}
