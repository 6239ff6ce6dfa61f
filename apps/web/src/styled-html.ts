// Markup from a renderer (KaTeX, Mermaid) put into the page under its Content-Security-Policy
// (`style-src 'self'`, no 'unsafe-inline'; see docs/web-app.md). Chromium blocks, and reports, a
// style attribute as soon as markup holding one is parsed, even by DOMParser (which DOMPurify
// uses), so style attributes are renamed in the markup before any parse, and their declarations
// are set again through the CSSOM once the elements exist, which the policy allows.

const INLINE_STYLE = 'data-inline-style';
const STYLE_ATTRIBUTE = /(<[a-zA-Z][^<>]*?\s)style=/g;

/** `markup` with each tag's `style` attribute renamed `data-inline-style` (applied by setStyledHtml). */
export function withoutStyleAttributes(markup: string): string {
  return markup.replace(STYLE_ATTRIBUTE, `$1${INLINE_STYLE}=`);
}

/** Puts sanitized `html` into `target`, its inline styles set through the CSSOM. */
export function setStyledHtml(target: Element, html: string): void {
  const inert = new DOMParser().parseFromString(`<!doctype html><body>${withoutStyleAttributes(html)}`, 'text/html');
  const body = document.importNode(inert.body, true);
  for (const el of Array.from(body.querySelectorAll<HTMLElement | SVGElement>(`[${INLINE_STYLE}]`))) {
    el.style.cssText = el.getAttribute(INLINE_STYLE) ?? '';
    el.removeAttribute(INLINE_STYLE);
  }
  target.replaceChildren(...Array.from(body.childNodes));
}
