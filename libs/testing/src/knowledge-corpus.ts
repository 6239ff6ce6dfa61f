import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yazl from 'yazl';
import type { SearchHitDto } from '#contracts/knowledge.js';
import { minimalPdf } from './minimal-pdf.js';
import type { KnowledgeQuestion } from './knowledge-questions.js';

/**
 * The knowledge bench's generated corpus (docs/performance.md, "bench/knowledge"), also used by the
 * question-set test at a small size: documents in eight formats (Markdown, HTML, text, CSV, DOCX,
 * PDF, PPTX, XLSX) of distractor text — paragraphs of a 36-word office vocabulary, and templated
 * English and Chinese sentences about invented rules sharing the question set's common words — with
 * each question's passage planted, as one paragraph (a slide line, a sheet cell), in a document of
 * its own. Office files are minimal valid OOXML written with yazl; DOCX, PPTX and XLSX also carry a
 * picture (random bytes, stored uncompressed, as real documents carry photos and screenshots) sized
 * so the corpus reaches its byte target: the parsers skip such parts unread, so the bytes are there
 * for the upload and copy path while the text stays what the index can take.
 */

export const CORPUS_FORMATS = ['md', 'html', 'txt', 'csv', 'docx', 'pdf', 'pptx', 'xlsx'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

export interface CorpusOptions {
  /** Documents in all (at least one per question). */
  docs: number;
  /** Bytes the files reach in all (pictures in the Office files fill what the text leaves); 0: text only. */
  targetBytes?: number;
  /** Passages to plant, one per document. */
  questions?: readonly KnowledgeQuestion[];
  /** Documents per folder (`c0`, `c1`, …); default 1,000 (`POST /api/tlon/:kbId/files` takes folders). */
  perFolder?: number;
  /** One document in `bigEvery` has 400 paragraphs (~200 KB of text) instead of 3–14; default 50. */
  bigEvery?: number;
}

export interface Corpus {
  /** Bytes of the files written. */
  bytes: number;
  /** Bytes (UTF-8) of the text the documents hold, before any format's markup. */
  textBytes: number;
  /** Documents per format. */
  formats: Record<CorpusFormat, number>;
  /** The folders written under the root (`c0`, …). */
  folders: string[];
  /** For each planted question's id, the file name of the document holding its passage (names are unique). */
  planted: Map<string, string>;
}

/** Deterministic pseudo-random numbers (a corpus is the same every time). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The bench's original vocabulary (its seeded search corpus uses it too). */
export const CORPUS_VOCAB = (
  'invoice refund shipment warranty contract budget roadmap meeting release customer supplier audit policy ' +
  'server database backup latency throughput migration schema index cache queue worker replica outage ' +
  'holiday salary pension training onboarding security password certificate firewall network storage'
).split(' ');

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

/** Sentences about invented rules in the question set's own words (days, month, staff, free…): the hard distractors. */
function englishSentence(rand: () => number): string {
  const who = pick(rand, ['Staff', 'Customers', 'Members', 'New employees', 'Visitors', 'Drivers', 'Students']);
  const org = pick(rand, ['the head office', 'the north depot', 'the main branch', 'the regional team', 'the lab']);
  const what = pick(rand, [
    'must submit the monthly report',
    'can book the meeting room',
    'receive a parking permit',
    'may request extra training days',
    'pay a small fee for printing',
    'get a free coffee voucher',
    'need approval from a manager',
  ]);
  const when = pick(rand, [
    'before the end of each month',
    'every two weeks',
    'during the first year',
    'on weekdays from 9 am to 5 pm',
    'within 10 working days',
    'at least once per quarter',
  ]);
  return `${who} at ${org} ${what} ${when}, and the policy is reviewed by the office every year.`;
}

function chineseSentence(rand: () => number): string {
  const who = pick(rand, ['公司员工', '会员', '新员工', '访客', '学生', '司机', '客户']);
  const org = pick(rand, ['总部', '分公司', '营业厅', '服务中心', '办公室']);
  const what = pick(rand, [
    '需要提交月度报告',
    '可以预约会议室',
    '可以免费领取停车证',
    '需要经过经理审批',
    '打印文件需要支付少量费用',
    '可以申请额外的培训时间',
  ]);
  const when = pick(rand, ['每个月月底之前', '每两周一次', '入职第一年内', '工作日上午九点到下午五点', '十个工作日内']);
  return `${org}的${who}${when}${what}，相关规定每年由行政部门统一修订。`;
}

/** One paragraph of distractor text: office vocabulary (most), or templated English or Chinese sentences. */
function distractor(rand: () => number, doc: number): string {
  const kind = rand();
  if (kind < 0.6) {
    const n = 40 + Math.floor(rand() * 40);
    return `${Array.from({ length: n }, () => pick(rand, CORPUS_VOCAB)).join(' ')} marker${doc}.`;
  }
  if (kind < 0.85) return Array.from({ length: 2 + Math.floor(rand() * 3) }, () => englishSentence(rand)).join(' ');
  return Array.from({ length: 2 + Math.floor(rand() * 3) }, () => chineseSentence(rand)).join('');
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A zip of `entries`; those marked `store` are kept uncompressed (pictures do not compress). */
async function zip(entries: Array<{ name: string; data: Buffer | string; store?: boolean }>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const e of entries) {
    z.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, { compress: !e.store });
  }
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

function contentTypes(overrides: Array<[string, string]>): string {
  return `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>${overrides
    .map(([part, type]) => `<Override PartName="/${part}" ContentType="${type}"/>`)
    .join('')}</Types>`;
}

function rels(list: Array<[id: string, type: string, target: string]>): string {
  return `${XML_HEAD}<Relationships xmlns="${PKG_REL}">${list
    .map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`)
    .join('')}</Relationships>`;
}

/** A picture part of `bytes` bytes: a PNG signature, then random bytes (incompressible, like a photo). */
function picture(bytes: number): Buffer {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([png, randomBytes(Math.max(0, bytes - png.length))]);
}

/** A DOCX: a Heading1 title, then one paragraph per entry; a picture part when `pictureBytes` > 0. */
export function docxOf(title: string, paragraphs: string[], pictureBytes = 0): Promise<Buffer> {
  const main = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml';
  const p = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r></w:p>`;
  return zip([
    { name: '[Content_Types].xml', data: contentTypes([['word/document.xml', main]]) },
    { name: '_rels/.rels', data: rels([['rId1', 'officeDocument', 'word/document.xml']]) },
    {
      name: 'word/document.xml',
      data: `${XML_HEAD}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${p(title, 'Heading1')}${paragraphs.map((x) => p(x)).join('')}</w:body></w:document>`,
    },
    ...(pictureBytes > 0
      ? [
          { name: 'word/_rels/document.xml.rels', data: rels([['rId1', 'image', 'media/image1.png']]) },
          { name: 'word/media/image1.png', data: picture(pictureBytes), store: true },
        ]
      : []),
  ]);
}

/** A PPTX: one slide per entry, its title then its text lines; a picture part when `pictureBytes` > 0. */
export function pptxOf(slides: Array<{ title: string; lines: string[] }>, pictureBytes = 0): Promise<Buffer> {
  const ns =
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"';
  const shape = (id: number, paras: string[]) =>
    `<p:sp><p:nvSpPr><p:cNvPr id="${id}" name="Shape ${id}"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>${paras
      .map((t) => `<a:p><a:r><a:rPr lang="en-US"/><a:t>${escapeXml(t)}</a:t></a:r></a:p>`)
      .join('')}</p:txBody></p:sp>`;
  const slideType = 'application/vnd.openxmlformats-officedocument.presentationml.slide+xml';
  return zip([
    {
      name: '[Content_Types].xml',
      data: contentTypes([
        ['ppt/presentation.xml', 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml'],
        ...slides.map((_, i): [string, string] => [`ppt/slides/slide${i + 1}.xml`, slideType]),
      ]),
    },
    { name: '_rels/.rels', data: rels([['rId1', 'officeDocument', 'ppt/presentation.xml']]) },
    {
      name: 'ppt/presentation.xml',
      data: `${XML_HEAD}<p:presentation ${ns} xmlns:r="${REL}"><p:sldIdLst>${slides
        .map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 1}"/>`)
        .join('')}</p:sldIdLst></p:presentation>`,
    },
    {
      name: 'ppt/_rels/presentation.xml.rels',
      data: rels(slides.map((_, i) => [`rId${i + 1}`, 'slide', `slides/slide${i + 1}.xml`])),
    },
    ...slides.map((s, i) => ({
      name: `ppt/slides/slide${i + 1}.xml`,
      data: `${XML_HEAD}<p:sld ${ns}><p:cSld><p:spTree>${shape(2, [s.title])}${shape(3, s.lines)}</p:spTree></p:cSld></p:sld>`,
    })),
    ...(pictureBytes > 0
      ? [
          { name: 'ppt/slides/_rels/slide1.xml.rels', data: rels([['rId1', 'image', '../media/image1.png']]) },
          { name: 'ppt/media/image1.png', data: picture(pictureBytes), store: true },
        ]
      : []),
  ]);
}

/**
 * An XLSX: one sheet per entry, its rows of cells; numbers as values, text as shared strings on
 * even rows and inline strings on odd rows (the parser reads both); a picture part when
 * `pictureBytes` > 0.
 */
export function xlsxOf(
  sheets: Array<{ name: string; rows: Array<Array<string | number>> }>,
  pictureBytes = 0,
): Promise<Buffer> {
  const shared: string[] = [];
  const sharedIndex = new Map<string, number>();
  const col = (c: number) => String.fromCharCode(65 + (c % 26));
  const sheetXml = (rows: Array<Array<string | number>>) =>
    rows
      .map(
        (row, r) =>
          `<row r="${r + 1}">${row
            .map((cell, c) => {
              const ref = `${col(c)}${r + 1}`;
              if (typeof cell === 'number') return `<c r="${ref}"><v>${cell}</v></c>`;
              if (r % 2 === 1) return `<c r="${ref}" t="inlineStr"><is><t>${escapeXml(cell)}</t></is></c>`;
              let k = sharedIndex.get(cell);
              if (k === undefined) sharedIndex.set(cell, (k = shared.push(cell) - 1));
              return `<c r="${ref}" t="s"><v>${k}</v></c>`;
            })
            .join('')}</row>`,
      )
      .join('');
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const sheetParts = sheets.map((s, i) => ({
    name: `xl/worksheets/sheet${i + 1}.xml`,
    data: `${XML_HEAD}<worksheet ${ns}><sheetData>${sheetXml(s.rows)}</sheetData></worksheet>`,
  }));
  const sheetType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml';
  return zip([
    {
      name: '[Content_Types].xml',
      data: contentTypes([
        ['xl/workbook.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml'],
        ['xl/sharedStrings.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml'],
        ...sheets.map((_, i): [string, string] => [`xl/worksheets/sheet${i + 1}.xml`, sheetType]),
      ]),
    },
    { name: '_rels/.rels', data: rels([['rId1', 'officeDocument', 'xl/workbook.xml']]) },
    {
      name: 'xl/workbook.xml',
      data: `${XML_HEAD}<workbook ${ns} xmlns:r="${REL}"><sheets>${sheets
        .map((s, i) => `<sheet name="${escapeXml(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
        .join('')}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: rels([
        ...sheets.map((_, i): [string, string, string] => [`rId${i + 1}`, 'worksheet', `worksheets/sheet${i + 1}.xml`]),
        [`rId${sheets.length + 1}`, 'sharedStrings', 'sharedStrings.xml'],
      ]),
    },
    ...sheetParts,
    {
      name: 'xl/sharedStrings.xml',
      data: `${XML_HEAD}<sst ${ns} count="${shared.length}" uniqueCount="${shared.length}">${shared
        .map((s) => `<si><t>${escapeXml(s)}</t></si>`)
        .join('')}</sst>`,
    },
    ...(pictureBytes > 0 ? [{ name: 'xl/media/image1.png', data: picture(pictureBytes), store: true }] : []),
  ]);
}

const OFFICE = new Set<CorpusFormat>(['docx', 'pptx', 'xlsx']);
/** Formats a passage can be planted in whole: CSV cells are split at commas; the test PDF writer is ASCII-only. */
const plantable = (format: CorpusFormat, q: KnowledgeQuestion) =>
  format !== 'csv' && (format !== 'pdf' || q.lang === 'en');

interface DocPlan {
  index: number;
  format: CorpusFormat;
  paragraphs: string[];
}

/**
 * A PDF's pages: the paragraphs wrapped at 90 characters (a longer line runs off the page, where the
 * text layer loses it), whole paragraphs per page up to about 900 characters, so a page is one
 * chunk and a paragraph is never cut between two. Non-ASCII paragraphs are left out: the test PDF
 * writer draws in Helvetica, ASCII only.
 */
function pdfPages(paragraphs: string[]): string[][] {
  const pages: string[][] = [];
  let page: string[] = [];
  let chars = 0;
  for (const p of paragraphs.filter((x) => /^[\x20-\x7e]*$/.test(x)).map((x) => x.slice(0, 900))) {
    if (chars + p.length > 900 && page.length > 0) {
      pages.push(page);
      page = [];
      chars = 0;
    }
    chars += p.length;
    page.push(...wrap(p, 90));
  }
  if (page.length > 0) pages.push(page);
  return pages.length > 0 ? pages : [['(empty)']];
}

/** Lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** A document's file: its name and bytes. */
async function render(plan: DocPlan, pictureBytes: number): Promise<[string, Buffer]> {
  const { index: i, paragraphs: paras } = plan;
  switch (plan.format) {
    case 'md':
      return [
        `doc${i}.md`,
        Buffer.from(
          `# Document ${i}\n\n${paras.map((p, k) => (k % 4 === 3 ? `## Part ${k}\n\n${p}` : p)).join('\n\n')}\n`,
        ),
      ];
    case 'html':
      return [
        `page${i}.html`,
        Buffer.from(
          `<html><head><title>Page ${i}</title></head><body><nav>menu</nav><h1>Page ${i}</h1>${paras.map((p) => `<p>${escapeXml(p)}</p>`).join('')}</body></html>`,
        ),
      ];
    case 'txt':
      return [`notes${i}.txt`, Buffer.from(paras.join('\n\n'))];
    case 'csv':
      return [
        `table${i}.csv`,
        Buffer.from(['id,topic,text', ...paras.map((p, k) => `${k},topic${k},"${p}"`)].join('\n')),
      ];
    case 'docx':
      return [`report${i}.docx`, await docxOf(`Report ${i}`, paras, pictureBytes)];
    case 'pdf':
      return [`scan${i}.pdf`, minimalPdf(pdfPages(paras))];
    case 'pptx': {
      const slides: Array<{ title: string; lines: string[] }> = [];
      for (let k = 0; k < paras.length; k += 3)
        slides.push({ title: `Deck ${i} slide ${k / 3 + 1}`, lines: paras.slice(k, k + 3) });
      return [`deck${i}.pptx`, await pptxOf(slides, pictureBytes)];
    }
    case 'xlsx': {
      const sheets: Array<{ name: string; rows: Array<Array<string | number>> }> = [];
      for (let k = 0; k < paras.length; k += 50) {
        sheets.push({
          name: `Sheet ${k / 50 + 1}`,
          rows: paras.slice(k, k + 50).map((p, r) => [k + r + 1, `topic${k + r}`, p]),
        });
      }
      return [`sheet${i}.xlsx`, await xlsxOf(sheets, pictureBytes)];
    }
  }
}

/**
 * Writes the corpus under `root` (folders `c0`, `c1`, …). Each question's passage goes into its own
 * document, spread over the corpus and over the formats that keep it whole, at a random place
 * among that document's paragraphs.
 */
export async function writeKnowledgeCorpus(root: string, options: CorpusOptions): Promise<Corpus> {
  const questions = options.questions ?? [];
  const perFolder = options.perFolder ?? 1000;
  const bigEvery = options.bigEvery ?? 50;
  if (options.docs < questions.length) throw new Error(`${questions.length} passages need as many documents`);
  const rand = rng(42);
  const plans: DocPlan[] = [];
  for (let i = 0; i < options.docs; i++) {
    const big = bigEvery > 0 && i % bigEvery === 0;
    const count = big ? 400 : 3 + Math.floor(rand() * 12);
    plans.push({
      index: i,
      format: CORPUS_FORMATS[i % CORPUS_FORMATS.length]!,
      paragraphs: Array.from({ length: count }, () => distractor(rand, i)),
    });
  }
  // Planting: question k aims at the document k/n of the way through, then takes the next free one
  // of the k-th plantable format in turn (any plantable one when none is left), so the passages
  // are spread over the corpus and over the formats that keep them whole.
  const planted = new Map<string, number>();
  const used = new Set<number>();
  questions.forEach((q, k) => {
    const turns = CORPUS_FORMATS.filter((f) => plantable(f, q));
    const wanted = turns[k % turns.length]!;
    const start = Math.floor((k * options.docs) / questions.length);
    const free = (i: number, ok: (f: CorpusFormat) => boolean) => !used.has(i) && ok(plans[i]!.format);
    const next = (ok: (f: CorpusFormat) => boolean) => {
      for (let n = 0; n < options.docs; n++)
        if (free((start + n) % options.docs, ok)) return (start + n) % options.docs;
      return -1;
    };
    let i = next((f) => f === wanted);
    if (i < 0) i = next((f) => plantable(f, q));
    if (i < 0) throw new Error(`no document left to plant ${q.id} in`);
    used.add(i);
    const paras = plans[i]!.paragraphs;
    paras.splice(Math.floor(rand() * (paras.length + 1)), 0, q.passage);
    planted.set(q.id, i);
  });

  const textOf = (p: DocPlan) => p.paragraphs.reduce((n, x) => n + Buffer.byteLength(x) + 2, 0);
  const textBytes = plans.reduce((n, p) => n + textOf(p), 0);
  let textLeft = textBytes;
  let officeLeft = plans.filter((p) => OFFICE.has(p.format)).length;
  const formats = Object.fromEntries(CORPUS_FORMATS.map((f) => [f, 0])) as Record<CorpusFormat, number>;
  const names = new Map<number, string>();
  const folders: string[] = [];
  let bytes = 0;
  for (const plan of plans) {
    const folderName = `c${Math.floor(plan.index / perFolder)}`;
    if (plan.index % perFolder === 0) {
      mkdirSync(join(root, folderName), { recursive: true });
      folders.push(folderName);
    }
    textLeft -= textOf(plan);
    let pictureBytes = 0;
    if (OFFICE.has(plan.format)) {
      // What the target still lacks once the text left is written, shared by the Office files left.
      pictureBytes = Math.max(0, Math.ceil(((options.targetBytes ?? 0) - bytes - textLeft) / officeLeft));
      officeLeft--;
    }
    const [name, body] = await render(plan, pictureBytes);
    writeFileSync(join(root, folderName, name), body);
    names.set(plan.index, name);
    bytes += body.length;
    formats[plan.format]++;
  }
  return {
    bytes,
    textBytes,
    formats,
    folders,
    planted: new Map([...planted].map(([id, i]) => [id, names.get(i)!])),
  };
}

export interface RecallFigures {
  /** Share of questions whose passage is in the top 10, per language and overall (0–1). */
  en: number;
  zh: number;
  all: number;
  /** Ids of the questions missed. */
  missed: string[];
}

/** Text with every run of white space made one space (extraction and chunking may change line breaks). */
const flat = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * A hit for recall@k: one of the first `k` chunks answered is from the document the passage was
 * planted in (its `sourceName` is that file's name) and holds the whole passage, white space
 * compared loosely (docs/performance.md, "bench/knowledge").
 */
export function isHit(hits: readonly SearchHitDto[], q: KnowledgeQuestion, document: string, k = 10): boolean {
  const passage = flat(q.passage);
  return hits.slice(0, k).some((h) => h.sourceName === document && flat(h.text).includes(passage));
}

/** Asks every question through `search` (topK 10) and answers recall@10 per language and overall. */
export async function recallAt10(
  questions: readonly KnowledgeQuestion[],
  planted: ReadonlyMap<string, string>,
  search: (query: string) => Promise<SearchHitDto[]>,
): Promise<RecallFigures> {
  const found = { en: 0, zh: 0 };
  const asked = { en: 0, zh: 0 };
  const missed: string[] = [];
  for (const q of questions) {
    const document = planted.get(q.id);
    if (document === undefined) throw new Error(`question ${q.id} has no planted passage`);
    asked[q.lang]++;
    if (isHit(await search(q.question), q, document)) found[q.lang]++;
    else missed.push(q.id);
  }
  const share = (a: number, b: number) => (b === 0 ? NaN : a / b);
  return {
    en: share(found.en, asked.en),
    zh: share(found.zh, asked.zh),
    all: share(found.en + found.zh, asked.en + asked.zh),
    missed,
  };
}
