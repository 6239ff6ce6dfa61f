import yauzl from 'yauzl';

/**
 * Text out of Office Open XML files (DOCX, PPTX, XLSX) by reading the zip with yauzl and the
 * XML parts that hold the text, the way the original product does, keeping DOCX headings as
 * Markdown headings, one `## Slide n` per slide and one `## <sheet>` per sheet. Limits against zip
 * bombs: entries, bytes per part and bytes in all (counted while inflating; headers are not trusted).
 */

export const OFFICE_LIMITS = { maxEntries: 5_000, maxPartBytes: 64 * 1024 * 1024, maxTotalBytes: 200 * 1024 * 1024 };

export class ExtractionRefused extends Error {}

/** The parts of a zip whose names `wanted` accepts, inflated, by name. */
export function readZipParts(bytes: Buffer, wanted: (name: string) => boolean): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(
      bytes,
      { lazyEntries: true, decodeStrings: true, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => {
        if (err || !zip)
          return reject(new ExtractionRefused(`Not a readable zip archive (${err?.message ?? 'unknown'})`));
        const out = new Map<string, Buffer>();
        let total = 0;
        let count = 0;
        let failed = false;
        const fail = (e: Error) => {
          if (failed) return;
          failed = true;
          zip.close();
          reject(e);
        };
        zip.on('error', (e: Error) => fail(new ExtractionRefused(`Broken zip archive (${e.message})`)));
        zip.on('end', () => {
          if (!failed) resolve(out);
        });
        zip.on('entry', (entry: yauzl.Entry) => {
          if (++count > OFFICE_LIMITS.maxEntries)
            return fail(new ExtractionRefused(`More than ${OFFICE_LIMITS.maxEntries} parts`));
          const name = entry.fileName;
          if (name.endsWith('/') || !wanted(name)) return zip.readEntry();
          if (entry.uncompressedSize > OFFICE_LIMITS.maxPartBytes) {
            return fail(
              new ExtractionRefused(`The part ${name} unpacks to more than ${OFFICE_LIMITS.maxPartBytes / 1048576} MB`),
            );
          }
          zip.openReadStream(entry, (streamErr, stream) => {
            if (streamErr || !stream) return fail(new ExtractionRefused(`Unreadable part ${name}`));
            const chunks: Buffer[] = [];
            let part = 0;
            stream.on('data', (chunk: Buffer) => {
              part += chunk.length;
              total += chunk.length;
              if (part > OFFICE_LIMITS.maxPartBytes || total > OFFICE_LIMITS.maxTotalBytes) {
                stream.destroy();
                fail(
                  new ExtractionRefused(`The archive unpacks to more than ${OFFICE_LIMITS.maxTotalBytes / 1048576} MB`),
                );
                return;
              }
              chunks.push(chunk);
            });
            stream.on('error', (e: Error) => fail(new ExtractionRefused(`Broken part ${name} (${e.message})`)));
            stream.on('end', () => {
              if (failed) return;
              out.set(name, Buffer.concat(chunks));
              zip.readEntry();
            });
          });
        });
        zip.readEntry();
      },
    );
  });
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** XML/HTML character references and the common named entities. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The text of the `<tag>…</tag>` runs (e.g. `w:t`, `a:t`) inside a piece of XML, joined. */
function runs(xml: string, tag: string): string {
  const re = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`, 'g');
  let out = '';
  for (const m of xml.matchAll(re)) out += m[1];
  return decodeEntities(out);
}

const byNumber = (prefix: RegExp) => (a: string, b: string) =>
  Number(prefix.exec(a)?.[1] ?? 0) - Number(prefix.exec(b)?.[1] ?? 0);

export async function docxText(bytes: Buffer): Promise<string> {
  const parts = await readZipParts(bytes, (n) => n === 'word/document.xml');
  const xml = parts.get('word/document.xml')?.toString('utf8');
  if (xml === undefined) throw new ExtractionRefused('Not a DOCX document (no word/document.xml)');
  const lines: string[] = [];
  for (const p of xml.matchAll(/<w:p[\s>][\s\S]*?<\/w:p>/g)) {
    const para = p[0];
    const text = runs(para.replace(/<w:tab\/>/g, '<w:t>\t</w:t>').replace(/<w:br\/>/g, '<w:t>\n</w:t>'), 'w:t').trim();
    if (text === '') continue;
    const style = /<w:pStyle w:val="([^"]+)"/.exec(para)?.[1] ?? '';
    const level = /^(?:Heading|heading|Titre|berschrift)\s*(\d)$/.exec(style)?.[1] ?? (style === 'Title' ? '1' : null);
    lines.push(level ? `${'#'.repeat(Math.min(6, Number(level)))} ${text}` : text, '');
  }
  return lines.join('\n');
}

export async function pptxText(bytes: Buffer): Promise<string> {
  const parts = await readZipParts(bytes, (n) => /^ppt\/slides\/slide\d+\.xml$/.test(n));
  if (parts.size === 0) throw new ExtractionRefused('Not a PPTX presentation (no slides)');
  const names = [...parts.keys()].sort(byNumber(/slide(\d+)\.xml$/));
  const out: string[] = [];
  names.forEach((name, i) => {
    const xml = parts.get(name)!.toString('utf8');
    const paras = [...xml.matchAll(/<a:p[\s>][\s\S]*?<\/a:p>/g)]
      .map((p) => runs(p[0], 'a:t').trim())
      .filter((t) => t !== '');
    if (paras.length === 0) return;
    out.push(`## Slide ${i + 1}: ${paras[0]}`, '', ...paras.slice(1), '');
  });
  return out.join('\n');
}

export async function xlsxText(bytes: Buffer): Promise<string> {
  const parts = await readZipParts(
    bytes,
    (n) => n === 'xl/sharedStrings.xml' || n === 'xl/workbook.xml' || /^xl\/worksheets\/sheet\d+\.xml$/.test(n),
  );
  const sheets = [...parts.keys()].filter((n) => n.startsWith('xl/worksheets/')).sort(byNumber(/sheet(\d+)\.xml$/));
  if (sheets.length === 0) throw new ExtractionRefused('Not an XLSX workbook (no sheets)');
  const shared = [...(parts.get('xl/sharedStrings.xml')?.toString('utf8') ?? '').matchAll(/<si>([\s\S]*?)<\/si>/g)].map(
    (m) => runs(m[1]!, 't'),
  );
  const sheetNames = [
    ...(parts.get('xl/workbook.xml')?.toString('utf8') ?? '').matchAll(/<sheet\s[^>]*name="([^"]*)"/g),
  ].map((m) => decodeEntities(m[1]!));
  const out: string[] = [];
  sheets.forEach((name, i) => {
    const xml = parts.get(name)!.toString('utf8');
    const rows: string[] = [];
    for (const row of xml.matchAll(/<row[\s>][\s\S]*?<\/row>/g)) {
      const cells: string[] = [];
      for (const c of row[0].matchAll(/<c(\s[^>]*)?(?:\/>|>([\s\S]*?)<\/c>)/g)) {
        const attrs = c[1] ?? '';
        const body = c[2] ?? '';
        const type = /\st="([^"]+)"/.exec(attrs)?.[1];
        const v = /<v>([\s\S]*?)<\/v>/.exec(body)?.[1];
        if (type === 's' && v !== undefined) cells.push(shared[Number(v)] ?? '');
        else if (type === 'inlineStr') cells.push(runs(body, 't'));
        else if (v !== undefined) cells.push(decodeEntities(v));
      }
      if (cells.some((c) => c.trim() !== '')) rows.push(cells.join('\t'));
    }
    if (rows.length > 0) out.push(`## ${sheetNames[i] ?? `Sheet ${i + 1}`}`, '', ...rows, '');
  });
  return out.join('\n');
}
