import { decodeEntities } from './office-text.js';

/**
 * Readable text of an HTML page: scripts, styles and page furniture (nav, header, footer, aside,
 * forms) dropped, headings kept as Markdown headings, blocks as paragraphs, list items as `- `,
 * table cells separated by tabs, entities decoded.
 */
export function htmlText(html: string): string {
  let s = html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template|svg|head|nav|footer|aside|form)\b[\s\S]*?<\/\1\s*>/gi, ' ');
  const main = /<(main|article)\b[^>]*>([\s\S]*?)<\/\1\s*>/i.exec(s);
  if (main && main[2]!.replace(/<[^>]+>/g, '').trim().length > 200) s = main[2]!;
  s = s
    .replace(/<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi, (_m, level: string, inner: string) => {
      const text = inner
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
      return text === '' ? '\n' : `\n\n${'#'.repeat(Number(level))} ${text}\n\n`;
    })
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<(td|th)\b[^>]*>/gi, '\t')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(
      /<\/?(p|div|section|article|main|header|tr|table|ul|ol|blockquote|pre|dl|dt|dd|figure|figcaption)\b[^>]*>/gi,
      '\n\n',
    )
    .replace(/<[^>]+>/g, '');
  return decodeEntities(s)
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, (ws) => (ws.includes('\t') ? '\t' : ' ')).trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
