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

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      return highlightCode(text, lang);
    },
  },
});

/** Markdown to HTML that is safe to insert: scripts, handlers and javascript: URLs removed. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
}
