import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkText } from './chunking.js';
import { rejectionReason } from './formats.js';
import { tsqueryLiteral, tsvectorLiteral, words } from './lexemes.js';
import { fuseByRank, RRF_K } from './rank-fusion.js';

describe('knowledge lexemes', () => {
  it('lower-cases words and drops punctuation', () => {
    assert.deepEqual(words('Hello, World! It’s 2026-11.'), ['hello', 'world', 'its', '2026', '11']);
  });

  it('segments Chinese and Japanese into words, and indexes Han words by character too', () => {
    const zh = words('我们的退货政策是三十天');
    assert.ok(zh.length > 2, JSON.stringify(zh));
    assert.ok(zh.join('') === '我们的退货政策是三十天');
    const tsv = tsvectorLiteral('退货政策');
    assert.match(tsv, /'退':\d/);
    assert.match(tsv, /'政策':\d|'退货政策':\d/);
    assert.ok(words('東京都に住んでいます').length > 2);
  });

  it('builds tsvector literals with positions and OR tsquery literals', () => {
    assert.equal(tsvectorLiteral("O'Brien o'brien obrien"), "'obrien':1,2,3");
    assert.equal(tsqueryLiteral('refund policy'), "'refund' | 'policy'");
    assert.equal(tsqueryLiteral(' !? '), null);
  });
});

describe('knowledge chunking', () => {
  it('splits at headings and keeps the heading path', () => {
    const chunks = chunkText('# Guide\nIntro text.\n## Install\nRun it.\n## Use\nUse it.\n# Other\nMore.');
    assert.deepEqual(
      chunks.map((c) => [c.heading, c.text]),
      [
        ['Guide', 'Intro text.'],
        ['Guide > Install', 'Run it.'],
        ['Guide > Use', 'Use it.'],
        ['Other', 'More.'],
      ],
    );
  });

  it('splits long sections by size with overlap, never beyond the limit by much', () => {
    const para = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(`# Long\n${para}\n\n${para}`, { maxChars: 500, overlapChars: 50 });
    assert.ok(chunks.length > 4);
    for (const c of chunks) assert.ok(c.text.length <= 560, String(c.text.length));
    assert.equal(chunks[0]!.heading, 'Long');
  });

  it('ignores # lines inside code fences', () => {
    const chunks = chunkText('# A\n```\n# not a heading\n```\ntext');
    assert.equal(chunks.length, 1);
  });
});

describe('knowledge formats', () => {
  it('accepts documents and rejects code and binaries with a reason', () => {
    assert.equal(rejectionReason('a.md'), null);
    assert.equal(rejectionReason('Report.DOCX'), null);
    assert.match(rejectionReason('main.ts')!, /Unsupported file type \.ts/);
    assert.match(rejectionReason('Makefile')!, /no extension/);
  });
});

describe('reciprocal rank fusion', () => {
  const hit = (id: string) => ({
    chunkId: id,
    kbId: 'kb',
    sourceName: `${id}.md`,
    sourcePath: `${id}.md`,
    heading: null,
    text: id,
    score: 0,
  });

  it('ranks a chunk in both lists above chunks in one, and keeps one entry per chunk', () => {
    const fused = fuseByRank(
      [
        [hit('a'), hit('b'), hit('c')],
        [hit('d'), hit('b'), hit('e')],
      ],
      10,
    );
    assert.deepEqual(
      fused.map((h) => h.chunkId),
      ['b', 'a', 'd', 'c', 'e'],
    );
    assert.equal(fused[0]!.score, Number((2 / (RRF_K + 2)).toFixed(6)));
  });

  it('answers at most topK, and a list alone keeps its order', () => {
    assert.deepEqual(
      fuseByRank([[], [hit('x'), hit('y'), hit('z')]], 2).map((h) => h.chunkId),
      ['x', 'y'],
    );
  });
});
