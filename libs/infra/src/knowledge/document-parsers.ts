import { isUtf8 } from 'node:buffer';
import { extname } from 'node:path';
import { DocumentParser } from '#core/knowledge/knowledge.ports.js';
import { htmlText } from './html-text.js';
import { docxText, ExtractionRefused, pptxText, xlsxText } from './office-text.js';

/** Most characters of text one source may give (more is cut, with a note in the log of the source). */
export const MAX_TEXT_CHARS = 20 * 1024 * 1024;

function decodeText(bytes: Buffer): string | null {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString('utf16le');
  const body =
    bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  if (!isUtf8(body)) return null;
  return body.toString('utf8');
}

/** CSV/TSV as text: one line per row, cells separated by ` | ` so words stay apart. */
function tableText(text: string, separator: string): string {
  return text
    .split(/\r?\n/)
    .map((line) =>
      line
        .split(separator)
        .map((c) => c.replace(/^"|"$/g, '').trim())
        .join(' | '),
    )
    .join('\n');
}

/**
 * Text out of each accepted format (docs/api/knowledge.md, "Sources"). Never throws: a
 * refused or broken file answers its reason, which becomes the source's `failed` state.
 */
export class BuiltInDocumentParser extends DocumentParser {
  async extract(name: string, bytes: Buffer): Promise<{ text: string } | { error: string }> {
    try {
      const text = await this.text(extname(name).toLowerCase(), bytes);
      if ('error' in text) return text;
      return { text: text.text.length > MAX_TEXT_CHARS ? text.text.slice(0, MAX_TEXT_CHARS) : text.text };
    } catch (err) {
      if (err instanceof ExtractionRefused) return { error: err.message };
      return { error: `Text extraction failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async text(ext: string, bytes: Buffer): Promise<{ text: string } | { error: string }> {
    switch (ext) {
      case '.docx':
        return { text: await docxText(bytes) };
      case '.pptx':
        return { text: await pptxText(bytes) };
      case '.xlsx':
        return { text: await xlsxText(bytes) };
      case '.pdf':
        return { error: 'PDF text extraction is not available on this server yet' };
      default:
        break;
    }
    const text = decodeText(bytes);
    if (text === null) return { error: 'Not UTF-8 text' };
    if (ext === '.html' || ext === '.htm') return { text: htmlText(text) };
    if (ext === '.csv') return { text: tableText(text, ',') };
    if (ext === '.tsv') return { text: tableText(text, '\t') };
    return { text };
  }
}
