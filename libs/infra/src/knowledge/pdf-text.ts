import { loadOnce } from '../common/load-once.js';
import { ExtractionRefused } from './office-text.js';

/**
 * Text out of a PDF with `unpdf` (a server build of Mozilla's pdf.js, no native code, no
 * dependency of its own), one `# Page n` heading per page so a chunk's heading cites its page.
 * Limits against bombs besides the 50 MB source limit: the page count, the characters kept and
 * the time spent (checked between pages; the ingest job's own 60 s race stays the outer bound).
 * A broken or encrypted file throws `ExtractionRefused` with its reason.
 */

export const PDF_LIMITS = { maxPages: 2_000, maxMillis: 55_000, maxChars: 2 * 1024 * 1024 };

/** Loaded at the first PDF: most servers never read one, and pdf.js is a large module. */
const loadUnpdf = loadOnce(() => import('unpdf'));

function reason(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'PasswordException') return 'The PDF is encrypted (a password is needed to read it)';
  if (name === 'InvalidPDFException') return `Not a readable PDF (${message})`;
  return `Broken PDF (${message})`;
}

export async function pdfText(bytes: Buffer, limits = PDF_LIMITS): Promise<string> {
  const started = Date.now();
  const { getDocumentProxy } = await loadUnpdf();
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may detach the buffer it is given: hand it a copy.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, stopAtErrors: true, verbosity: 0 });
  } catch (err) {
    throw new ExtractionRefused(reason(err));
  }
  try {
    if (pdf.numPages > limits.maxPages) {
      throw new ExtractionRefused(`Too many pages (${pdf.numPages}; at most ${limits.maxPages})`);
    }
    const parts: string[] = [];
    let chars = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      if (Date.now() - started > limits.maxMillis) {
        throw new ExtractionRefused(`Text extraction took longer than ${Math.round(limits.maxMillis / 1000)} s`);
      }
      let text: string;
      try {
        const page = await pdf.getPage(n);
        const content = await page.getTextContent();
        text = content.items
          .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : ' ') : ''))
          .join('')
          .replace(/[ \t]+\n/g, '\n')
          .trim();
        page.cleanup();
      } catch (err) {
        throw new ExtractionRefused(`${reason(err)} on page ${n}`);
      }
      if (text === '') continue;
      parts.push(`# Page ${n}\n\n${text}`);
      chars += text.length;
      if (chars > limits.maxChars) break;
    }
    return parts.join('\n\n');
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}
