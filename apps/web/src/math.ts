// The math chunk: KaTeX with its CSS and fonts, loaded the first time a message holds math.
import DOMPurify from 'dompurify';
import katex from 'katex';
import 'katex/dist/katex.min.css';
import { setStyledHtml, withoutStyleAttributes } from './styled-html.js';

/** KaTeX's sanitized output per TeX (a streamed reply renders the same formulas again and again). */
const drawn = new Map<string, string>();

function katexHtml(tex: string, display: boolean): string {
  const key = `${display ? 'display' : 'inline'}\n${tex}`;
  let html = drawn.get(key);
  if (html === undefined) {
    // throwOnError false: TeX that does not parse is shown as its source (class katex-error).
    // Both HTML (what is seen) and MathML (what screen readers read) are kept.
    const raw = katex.renderToString(tex, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' });
    html = DOMPurify.sanitize(withoutStyleAttributes(raw), { USE_PROFILES: { html: true, mathMl: true } });
    drawn.set(key, html);
  }
  return html;
}

/** Replaces each math placeholder under `root` (see markdown.ts) with its KaTeX rendering. */
export function drawMath(root: ParentNode): void {
  for (const el of Array.from(root.querySelectorAll<HTMLElement>('.math[data-tex]:not([data-drawn])'))) {
    el.dataset.drawn = '';
    setStyledHtml(el, katexHtml(el.dataset.tex ?? '', el.hasAttribute('data-display')));
  }
}
