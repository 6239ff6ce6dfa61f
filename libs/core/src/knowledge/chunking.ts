import type { PreparedChunk } from './knowledge.ports.js';
import { tsvectorLiteral } from './lexemes.js';

/**
 * Splits a document's text into chunks for the index: first at its headings (Markdown `#`
 * headings, which the parsers produce for DOCX headings, slides and sheets too), then each
 * section by size at paragraph, line, sentence and finally word boundaries, with a little overlap
 * so a passage cut in two is still found whole in one of them. Each chunk keeps the heading path
 * it lies under (`Guide > Install`).
 */

export interface Chunk {
  heading?: string;
  text: string;
}

export interface ChunkOptions {
  /** Most characters in a chunk (default 1,200: a few paragraphs). */
  maxChars?: number;
  /** Characters repeated from the end of one piece at the start of the next (default 150). */
  overlapChars?: number;
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;

interface Section {
  heading?: string;
  lines: string[];
}

function sections(text: string): Section[] {
  const out: Section[] = [];
  const path: string[] = [];
  let current: Section = { lines: [] };
  let inFence = false;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const m = inFence ? null : HEADING.exec(line);
    if (m) {
      out.push(current);
      const level = m[1]!.length;
      path.length = Math.min(path.length, level - 1);
      while (path.length < level - 1) path.push('');
      path.push(m[2]!.trim());
      current = { heading: path.filter((p) => p !== '').join(' > '), lines: [] };
      continue;
    }
    current.lines.push(line);
  }
  out.push(current);
  return out.filter((s) => s.lines.join('').trim() !== '');
}

/** Separators to split at, coarsest first. */
const SEPARATORS = [/\n\s*\n/, /\n/, /(?<=[.!?。！？；;])\s*/u, /\s+/];

function splitBySize(text: string, maxChars: number, level = 0): string[] {
  if (text.length <= maxChars) return [text];
  if (level >= SEPARATORS.length) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += maxChars) out.push(text.slice(i, i + maxChars));
    return out;
  }
  const parts = text.split(SEPARATORS[level]!).filter((p) => p.trim() !== '');
  const joiner = level === 0 ? '\n\n' : level === 1 ? '\n' : ' ';
  const out: string[] = [];
  let current = '';
  for (const part of parts) {
    if (part.length > maxChars) {
      if (current !== '') out.push(current);
      current = '';
      out.push(...splitBySize(part, maxChars, level + 1));
      continue;
    }
    if (current === '') current = part;
    else if (current.length + joiner.length + part.length <= maxChars) current += joiner + part;
    else {
      out.push(current);
      current = part;
    }
  }
  if (current !== '') out.push(current);
  return out;
}

/** The tail of a piece to repeat at the start of the next one: whole words, at most `chars`. */
function tail(text: string, chars: number): string {
  if (chars <= 0 || text.length <= chars) return chars <= 0 ? '' : text;
  const cut = text.slice(text.length - chars);
  const space = cut.search(/\s/);
  return space >= 0 && space < cut.length - 1 ? cut.slice(space + 1) : cut;
}

/** A document's chunks with their keyword lexemes (what the index stores), from its text. */
export function prepareChunks(sourceName: string, text: string): PreparedChunk[] {
  return chunkText(text).map((c) => ({
    heading: c.heading ?? null,
    text: c.text,
    tsv: tsvectorLiteral(`${sourceName}\n${c.heading ?? ''}\n${c.text}`),
  }));
}

export function chunkText(text: string, options: ChunkOptions = {}): Chunk[] {
  const maxChars = Math.max(200, options.maxChars ?? 1200);
  const overlap = Math.min(Math.max(0, options.overlapChars ?? 150), Math.floor(maxChars / 4));
  const out: Chunk[] = [];
  for (const section of sections(text)) {
    const body = section.lines.join('\n').trim();
    const pieces = splitBySize(body, maxChars - overlap);
    pieces.forEach((piece, i) => {
      const prefix = i > 0 ? tail(pieces[i - 1]!, overlap) : '';
      const chunkBody = prefix === '' ? piece : `${prefix} ${piece}`;
      out.push({ ...(section.heading ? { heading: section.heading } : {}), text: chunkBody.trim() });
    });
  }
  return out;
}
