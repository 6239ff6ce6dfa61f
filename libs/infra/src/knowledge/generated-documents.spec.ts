import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { docxOf, pptxOf, writeKnowledgeCorpus, xlsxOf } from '#testing/knowledge-corpus.js';
import { KNOWLEDGE_QUESTIONS } from '#testing/knowledge-questions.js';
import { extractText, prepareSource } from './document-parsers.js';
import { docxText, pptxText, xlsxText } from './office-text.js';

/** The knowledge bench's generated Office files read back by the server's parsers (docs/performance.md). */
describe('generated corpus documents through the parsers', () => {
  it('a generated PPTX gives one heading per slide with its title, then its lines; the picture is skipped', async () => {
    const bytes = await pptxOf(
      [
        { title: 'Quarterly plan', lines: ['Ship the kettle in May.', '青岚科技的新员工享有十五天带薪年假。'] },
        { title: 'Risks & costs', lines: ['Suppliers <late> by 3 weeks.'] },
      ],
      300 * 1024,
    );
    assert.ok(bytes.length > 300 * 1024, 'the picture is in the file');
    assert.equal(
      await pptxText(bytes),
      [
        '## Slide 1: Quarterly plan',
        '',
        'Ship the kettle in May.',
        '青岚科技的新员工享有十五天带薪年假。',
        '',
        '## Slide 2: Risks & costs',
        '',
        'Suppliers <late> by 3 weeks.',
        '',
      ].join('\n'),
    );
  });

  it('a generated XLSX gives one heading per sheet and a row per line, shared and inline strings alike', async () => {
    const bytes = await xlsxOf(
      [
        {
          name: 'Prices',
          rows: [
            [1, 'kettle', 'two year warranty'],
            [2, 'toaster & grill', 'one year'],
          ],
        },
        { name: '汇总', rows: [[3, '年假', '十五天']] },
      ],
      64 * 1024,
    );
    assert.equal(
      await xlsxText(bytes),
      [
        '## Prices',
        '',
        '1\tkettle\ttwo year warranty',
        '2\ttoaster & grill\tone year',
        '',
        '## 汇总',
        '',
        '3\t年假\t十五天',
        '',
      ].join('\n'),
    );
  });

  it('a generated DOCX keeps its title as a heading and each paragraph', async () => {
    const text = await docxText(await docxOf('Report 7', ['First <one>.', 'Second & last.'], 1024));
    assert.equal(text, '# Report 7\n\nFirst <one>.\n\nSecond & last.\n');
  });

  it('every planted passage of a small corpus lands whole in one chunk of its document, in every format', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kb-corpus-'));
    try {
      const corpus = await writeKnowledgeCorpus(root, {
        docs: 160,
        questions: KNOWLEDGE_QUESTIONS,
        targetBytes: 4 * 1024 * 1024,
        bigEvery: 0,
      });
      assert.ok(corpus.bytes >= 4 * 1024 * 1024 * 0.98, `${corpus.bytes} bytes`);
      assert.ok(
        Object.values(corpus.formats).every((n) => n === 20),
        JSON.stringify(corpus.formats),
      );
      const plantedFormats = new Set<string>();
      for (const q of KNOWLEDGE_QUESTIONS) {
        const name = corpus.planted.get(q.id)!;
        plantedFormats.add(name.split('.').pop()!);
        const bytes = readFileSync(join(root, 'c0', name));
        const prepared = await prepareSource(name, bytes);
        assert.ok('chunks' in prepared, `${name}: ${JSON.stringify(prepared)}`);
        const flat = (s: string) => s.replace(/\s+/g, ' ');
        assert.ok(
          prepared.chunks.some((c) => flat(c.text).includes(q.passage)),
          `${q.id} in ${name}: ${JSON.stringify((await extractText(name, bytes)) as object).slice(0, 400)}`,
        );
      }
      assert.deepEqual([...plantedFormats].sort(), ['docx', 'html', 'md', 'pdf', 'pptx', 'txt', 'xlsx']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
