/** Markdown and MIME output, rendered through JupyterLab's rendermime with its sanitizer. */
import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import * as React from 'react';
import { IClock, RenderThrottle } from '../throttle';
import { MimeBundle } from '../events';

/** How often streamed Markdown is rendered again while its text keeps growing. */
const RENDER_EVERY_MS = 80;

const windowClock: IClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => window.setTimeout(callback, ms),
  clearTimeout: id => window.clearTimeout(id)
};

/**
 * Streamed Markdown, rendered untrusted (so sanitized) through rendermime: the first text at
 * once, then at most every {@link RENDER_EVERY_MS} while it grows, and the final text always.
 */
export function Markdown(props: {
  readonly rendermime: IRenderMimeRegistry;
  readonly text: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const text = React.useRef(props.text);
  text.current = props.text;
  const renderer = React.useMemo(
    () => props.rendermime.createRenderer('text/markdown'),
    [props.rendermime]
  );
  const throttle = React.useMemo(
    () =>
      new RenderThrottle(
        () =>
          renderer.renderModel(
            new MimeModel({ data: { 'text/markdown': text.current }, trusted: false })
          ),
        RENDER_EVERY_MS,
        windowClock
      ),
    [renderer]
  );
  React.useEffect(() => {
    const node = host.current;
    node?.appendChild(renderer.node);
    return () => {
      throttle.dispose();
      renderer.dispose();
    };
  }, [renderer, throttle]);
  React.useEffect(() => throttle.changed(), [props.text, throttle]);
  return <div className="jp-resolve-markdown" ref={host} />;
}

function dataUrl(mime: string, value: unknown): string | null {
  if (typeof value !== 'string') {
    return null;
  }
  if (mime === 'image/svg+xml') {
    return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(value)}`;
  }
  return `data:${mime};base64,${value.replace(/\s/g, '')}`;
}

/**
 * A tool's MIME bundle. Images go into `<img>` (an SVG there runs no script); HTML and Markdown
 * through rendermime untrusted (sanitized); otherwise plain text.
 */
export function MimeOutput(props: {
  readonly rendermime: IRenderMimeRegistry;
  readonly bundle: MimeBundle;
}): JSX.Element | null {
  const { bundle } = props;
  const image = ['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml'].find(m => m in bundle);
  if (image) {
    const src = dataUrl(image, bundle[image]);
    return src ? <img className="jp-resolve-image" src={src} alt={`${image} output`} /> : null;
  }
  if (typeof bundle['text/markdown'] === 'string') {
    return <Markdown rendermime={props.rendermime} text={bundle['text/markdown'] as string} />;
  }
  if (typeof bundle['text/html'] === 'string') {
    return <Html rendermime={props.rendermime} html={bundle['text/html'] as string} />;
  }
  return null;
}

function Html(props: { readonly rendermime: IRenderMimeRegistry; readonly html: string }): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  React.useEffect(() => {
    const renderer = props.rendermime.createRenderer('text/html');
    host.current?.appendChild(renderer.node);
    void renderer.renderModel(new MimeModel({ data: { 'text/html': props.html }, trusted: false }));
    return () => renderer.dispose();
  }, [props.html, props.rendermime]);
  return <div className="jp-resolve-html" ref={host} />;
}
