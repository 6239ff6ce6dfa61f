import { isUtf8 } from 'node:buffer';
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { prepareChunks } from '#core/knowledge/chunking.js';
import { DocumentParser, type PreparedChunk } from '#core/knowledge/knowledge.ports.js';
import { htmlText } from './html-text.js';
import { docxText, ExtractionRefused, pptxText, xlsxText } from './office-text.js';
import { pdfText } from './pdf-text.js';

/**
 * Most characters of text one source may give (more is cut): about 1,800 chunks. A source's
 * chunks are replaced in one transaction; 20 M characters (the limit before) made ~20,000 rows
 * whose insert held the embedded database for many seconds (issue 33's stall of the API).
 */
export const MAX_TEXT_CHARS = 2 * 1024 * 1024;

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

/** Text out of each accepted format, in this thread. Never throws: a refused or broken file answers its reason. */
export async function extractText(name: string, bytes: Buffer): Promise<{ text: string } | { error: string }> {
  try {
    const text = await textOf(extname(name).toLowerCase(), bytes);
    if ('error' in text) return text;
    return { text: text.text.length > MAX_TEXT_CHARS ? text.text.slice(0, MAX_TEXT_CHARS) : text.text };
  } catch (err) {
    if (err instanceof ExtractionRefused) return { error: err.message };
    return { error: `Text extraction failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Extraction, chunking and lexemes of one source, in this thread (the worker's job). */
export async function prepareSource(
  name: string,
  bytes: Buffer,
): Promise<{ chunks: PreparedChunk[] } | { error: string }> {
  const extracted = await extractText(name, bytes);
  if ('error' in extracted) return extracted;
  return { chunks: prepareChunks(name, extracted.text) };
}

async function textOf(ext: string, bytes: Buffer): Promise<{ text: string } | { error: string }> {
  switch (ext) {
    case '.docx':
      return { text: await docxText(bytes) };
    case '.pptx':
      return { text: await pptxText(bytes) };
    case '.xlsx':
      return { text: await xlsxText(bytes) };
    case '.pdf':
      return { text: await pdfText(bytes) };
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

/** Plain-text sources up to this size are prepared in this thread (bounded, quick); the rest in the worker. */
export const IN_THREAD_MAX_BYTES = 64 * 1024;
const PACKED = new Set(['.docx', '.pptx', '.xlsx', '.pdf']);

/**
 * Text out of each accepted format (docs/api/knowledge.md, "Sources"). Never throws: a
 * refused or broken file answers its reason, which becomes the source's `failed` state.
 * `prepare` runs a packed (Office, PDF) or larger file in a worker thread kept for the purpose
 * (one file at a time, memory-capped), which is stopped and replaced when a file runs past its
 * time budget or crashes it: a zip or entity bomb, or a document built to be slow, fails alone
 * while the event loop keeps answering (issue 33).
 */
export class BuiltInDocumentParser extends DocumentParser {
  private readonly worker = new PrepareWorker();

  extract(name: string, bytes: Buffer): Promise<{ text: string } | { error: string }> {
    return extractText(name, bytes);
  }

  prepare(name: string, bytes: Buffer, budgetMs: number): Promise<{ chunks: PreparedChunk[] } | { error: string }> {
    if (bytes.length <= IN_THREAD_MAX_BYTES && !PACKED.has(extname(name).toLowerCase())) {
      return prepareSource(name, bytes);
    }
    return this.worker.run(name, bytes, budgetMs);
  }
}

type WorkerAnswer = { id: number; result: { chunks: PreparedChunk[] } | { error: string } };

/** One long-lived worker thread doing `prepareSource`, one job at a time; replaced when it is stopped or dies. */
class PrepareWorker {
  private worker: Worker | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  private pending: { id: number; done: (r: WorkerAnswer['result']) => void } | null = null;

  run(name: string, bytes: Buffer, budgetMs: number): Promise<{ chunks: PreparedChunk[] } | { error: string }> {
    const job = this.chain.then(() => this.once(name, bytes, budgetMs));
    this.chain = job.catch(() => undefined);
    return job;
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./prepare.worker.js', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: 1536, maxYoungGenerationSizeMb: 64 },
    });
    worker.unref();
    worker.on('message', (answer: WorkerAnswer) => {
      if (this.pending?.id === answer.id) this.pending.done(answer.result);
    });
    const lost = (why: string) => {
      if (this.worker === worker) this.worker = null;
      this.pending?.done({ error: `Text extraction failed: ${why}` });
    };
    worker.on('error', (err) => lost(err.message));
    worker.on('exit', (code) => lost(`the extraction worker stopped (exit code ${code})`));
    return worker;
  }

  private once(
    name: string,
    bytes: Buffer,
    budgetMs: number,
  ): Promise<{ chunks: PreparedChunk[] } | { error: string }> {
    return new Promise((resolve) => {
      const worker = (this.worker ??= this.spawn());
      const id = ++this.nextId;
      const timer = setTimeout(() => {
        finish({ error: `Text extraction took longer than ${Math.round(budgetMs / 1000)} s` });
        if (this.worker === worker) this.worker = null;
        void worker.terminate();
      }, budgetMs);
      const finish = (result: WorkerAnswer['result']) => {
        if (this.pending?.id !== id) return;
        this.pending = null;
        clearTimeout(timer);
        resolve(result);
      };
      this.pending = { id, done: finish };
      // A copy of its own, handed over (a Buffer may share its memory with others).
      const copy = new Uint8Array(bytes);
      worker.postMessage({ id, name, bytes: copy }, [copy.buffer]);
    });
  }
}
