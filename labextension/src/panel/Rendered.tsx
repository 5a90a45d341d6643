/** Markdown and MIME output, rendered through JupyterLab's rendermime with its sanitizer. */
import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import * as React from 'react';
import { MimeBundle } from '../validate';

/** Streamed Markdown: re-rendered (untrusted, so sanitized) at most every 80 ms. */
export function Markdown(props: {
  readonly rendermime: IRenderMimeRegistry;
  readonly text: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const renderer = React.useMemo(
    () => props.rendermime.createRenderer('text/markdown'),
    [props.rendermime]
  );
  React.useEffect(() => {
    const node = host.current;
    node?.appendChild(renderer.node);
    return () => renderer.dispose();
  }, [renderer]);
  React.useEffect(() => {
    const timer = window.setTimeout(() => {
      void renderer.renderModel(
        new MimeModel({ data: { 'text/markdown': props.text }, trusted: false })
      );
    }, 80);
    return () => window.clearTimeout(timer);
  }, [props.text, renderer]);
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
