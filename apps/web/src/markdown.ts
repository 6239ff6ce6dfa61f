import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';
import { lazyModule } from './lazy.js';

// highlight.js core with the languages a reply most often holds (about 20 KB gzip in all);
// anything else is shown as plain code. `js`, `ts`, `sh`, `html`, `yml`, `py`, ... are aliases.
for (const [name, language] of Object.entries({
  bash,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}

const escape = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A fenced block's code, highlighted when its language is known (highlight.js escapes the text). */
export function highlightCode(code: string, lang: string | undefined): string {
  const name = (lang ?? '').trim().split(/\s+/)[0]!.toLowerCase();
  if (name && hljs.getLanguage(name)) {
    const html = hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    return `<pre><code class="hljs language-${escape(name)}">${html}</code></pre>\n`;
  }
  return `<pre><code${name ? ` class="language-${escape(name)}"` : ''}>${escape(code)}</code></pre>\n`;
}

/** A fenced block is closed once its closing fence arrived (a streamed reply may still be inside it). */
const closedFence = (raw: string): boolean => /\n {0,3}(`{3,}|~{3,})[ \t]*\n*$/.test(raw);

/**
 * A placeholder that shows the TeX with its delimiters until the math chunk (KaTeX) replaces
 * it: the first screen carries only these few lines, never KaTeX itself.
 */
const mathPlaceholder = (tex: string, display: boolean, raw: string): string =>
  display
    ? `<div class="math math-display" data-tex="${escape(tex)}" data-display="">${escape(raw)}</div>\n`
    : `<span class="math" data-tex="${escape(tex)}">${escape(raw)}</span>`;

// Inline `$…$` follows the usual rules so that prices stay text: no space right after the
// opening `$` or before the closing one, and no digit right after it ("$5 and $10"); nor a
// backtick inside, so that a price never pairs with a `$` in a later code span.
const INLINE_MATH = /^\$(?!\s)((?:\\.|[^\\$\n`])+?)(?<!\s)\$(?![\d$])|^\\\(([\s\S]+?)\\\)/;
const DISPLAY_MATH_IN_LINE = /^\$\$([\s\S]+?)\$\$|^\\\[([\s\S]+?)\\\]/;
const DISPLAY_MATH_BLOCK = /^ {0,3}(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])[ \t]*(?:\n+|$)/;

const marked = new Marked({
  gfm: true,
  breaks: false,
  extensions: [
    {
      name: 'displayMath',
      level: 'block',
      tokenizer(src) {
        const m = DISPLAY_MATH_BLOCK.exec(src);
        return m ? { type: 'displayMath', raw: m[0], text: (m[1] ?? m[2]!).trim(), source: m[0].trim() } : undefined;
      },
      renderer: (token) => mathPlaceholder(token.text as string, true, token.source as string),
    },
    {
      name: 'inlineMath',
      level: 'inline',
      start: (src) => src.search(/\$|\\[([]/),
      tokenizer(src) {
        const display = DISPLAY_MATH_IN_LINE.exec(src);
        const m = display ?? INLINE_MATH.exec(src);
        if (!m) return undefined;
        return { type: 'inlineMath', raw: m[0], text: (m[1] ?? m[2]!).trim(), display: !!display };
      },
      renderer: (token) =>
        token.display
          ? `<span class="math math-display" data-tex="${escape(token.text as string)}" data-display="">${escape(token.raw)}</span>`
          : mathPlaceholder(token.text as string, false, token.raw),
    },
  ],
  renderer: {
    code({ text, lang, raw }) {
      // A closed ```mermaid block becomes a diagram (drawn by the lazy diagrams chunk); while it
      // streams it stays code, so partial text never flashes a parse error.
      if ((lang ?? '').trim().split(/\s+/)[0]!.toLowerCase() === 'mermaid' && closedFence(raw)) {
        return `<div class="diagram" data-mermaid="">${highlightCode(text, 'mermaid')}</div>\n`;
      }
      return highlightCode(text, lang);
    },
  },
});

/** Markdown to HTML that is safe to insert: scripts, handlers and javascript: URLs removed. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
}

// KaTeX and Mermaid (with their CSS and fonts) are lazy chunks, fetched the first time a
// message holds math or a diagram; a failed load leaves the source shown.
const loadMath = lazyModule(() => import('./math.js'));
const loadDiagrams = lazyModule(() => import('./diagrams.js'));

/** Draws the math and the diagrams of Markdown rendered under `root` (once each). */
export function drawMathAndDiagrams(root: HTMLElement): void {
  if (root.querySelector('.math[data-tex]:not([data-drawn])')) {
    void loadMath().then(
      (m) => m.drawMath(root),
      () => undefined,
    );
  }
  if (root.querySelector('.diagram[data-mermaid]:not([data-drawn])')) {
    void loadDiagrams().then(
      (m) => m.drawDiagrams(root),
      () => undefined,
    );
  }
}
