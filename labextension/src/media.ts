/**
 * Remote images in model and tool output become links (issue 14, item 12).
 *
 * JupyterLab's sanitizer keeps `<img src="https://...">`, `<video poster>`, CSS `url()` and the
 * like: a prompt-injected model could send data out of the page in such a URL, fetched the
 * moment the HTML is shown. So, unless the server allows remote images
 * (`c.Resolve.allow_remote_images`), what the panel renders loads images only from `data:`,
 * `blob:` or this page's origin; anything else is shown as a link the person may follow.
 */
import type { IRenderMime } from '@jupyterlab/rendermime';

/** True when `src` loads nothing from another origin: `data:`, `blob:` or same-origin. */
export function isInlineSource(src: string, pageUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(src, pageUrl);
  } catch {
    return false; // not a URL: nothing to load, and it is shown as text
  }
  if (url.protocol === 'data:' || url.protocol === 'blob:') {
    return true;
  }
  return url.origin === new URL(pageUrl).origin;
}

/** Attributes from which a browser fetches by itself. */
const FETCHING = ['src', 'poster', 'srcset', 'data', 'background', 'href', 'xlink:href'];
/** Elements whose `href` is fetched, not followed (SVG images, uses, filters, stylesheets). */
const FETCHING_HREF = new Set(['image', 'use', 'feimage', 'link']);
/** CSS that fetches: `url(...)` (the URL is group 2) and `@import`. */
const cssFetches = () => /url\(\s*(['"]?)(.*?)\1\s*\)|@import/gi;

export const REMOTE_NOTE = 'A remote image, not loaded: c.Resolve.allow_remote_images is off';

function remoteLink(doc: Document, url: string, label: string): HTMLAnchorElement {
  const a = doc.createElement('a');
  a.href = url;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  a.title = REMOTE_NOTE;
  a.className = 'jp-resolve-remote-image';
  a.textContent = `${label || url} (remote image)`;
  return a;
}

function urlsOf(name: string, value: string): string[] {
  if (name === 'srcset') {
    return value
      .split(',')
      .map(part => part.trim().split(/\s+/)[0])
      .filter(Boolean);
  }
  return [value];
}

/**
 * Sanitized HTML with every remote fetch made a link. Parsed with DOMParser, whose document
 * loads nothing, so no request leaves before the rewrite.
 */
export function linkRemoteMedia(html: string, pageUrl: string): string {
  if (!/src|poster|data|background|href|url\(|@import/i.test(html)) {
    return html;
  }
  const doc = new DOMParser().parseFromString(`<!DOCTYPE html><body>${html}`, 'text/html');
  const remote = (value: string) => !isInlineSource(value, pageUrl);
  for (const style of Array.from(doc.body.querySelectorAll('style'))) {
    if (cssFetches().test(style.textContent ?? '')) {
      style.remove();
    }
  }
  for (const element of Array.from(doc.body.querySelectorAll('*'))) {
    const tag = element.localName.toLowerCase();
    const style = element.getAttribute('style');
    if (style !== null) {
      const urls = Array.from(style.matchAll(cssFetches()), m => m[2] ?? '');
      // @import (no URL captured) or a remote url(): the whole style goes
      if (urls.some(u => u === '' || remote(u))) {
        element.removeAttribute('style');
      }
    }
    const links: string[] = [];
    for (const name of FETCHING) {
      const value = element.getAttribute(name);
      if (value === null) {
        continue;
      }
      if ((name === 'href' || name === 'xlink:href') && !FETCHING_HREF.has(tag)) {
        continue; // a link's href is followed only when clicked
      }
      const far = urlsOf(name, value).filter(remote);
      if (far.length) {
        element.removeAttribute(name);
        links.push(...far);
      }
    }
    if (!links.length) {
      continue;
    }
    if (tag === 'img') {
      const label = element.getAttribute('alt') || element.getAttribute('title') || '';
      element.replaceWith(remoteLink(doc, links[0], label));
    } else {
      element.after(...links.map(url => remoteLink(doc, url, url)));
    }
  }
  return doc.body.innerHTML;
}

/**
 * JupyterLab's sanitizer, then remote images as links (unless `allowRemote()` says they may
 * load). Rendermime calls it for every untrusted render, which is every render in the panel.
 */
export class RemoteMediaSanitizer implements IRenderMime.ISanitizer {
  constructor(
    private readonly base: IRenderMime.ISanitizer,
    private readonly allowRemote: () => boolean
  ) {}

  sanitize(dirty: string, options?: IRenderMime.ISanitizerOptions): string {
    const clean = this.base.sanitize(dirty, options);
    return this.allowRemote() ? clean : linkRemoteMedia(clean, document.baseURI);
  }

  getAutolink(): boolean {
    return this.base.getAutolink?.() ?? true;
  }

  get allowNamedProperties(): boolean | undefined {
    return this.base.allowNamedProperties;
  }

  get allowCommandLinker(): boolean | undefined {
    return this.base.allowCommandLinker;
  }
}
