import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreEntry } from '#contracts/store.js';
import { commandName, filterEntries, queryEntries, resolveLocale, sourced } from './store-query.js';

const e = (slug: string, type: StoreEntry['type'], extra: Partial<StoreEntry> = {}): StoreEntry => ({
  slug,
  name: slug,
  version: '1.0.0',
  author: 'a',
  description: `about ${slug}`,
  type,
  path: slug,
  category: 'other',
  tags: [],
  ...extra,
});

const entries = [
  sourced('r', e('news-digest', 'automation', { tags: ['daily'], i18n: { 'zh-CN': { name: '新闻摘要' } } })),
  sourced('r', e('pdf-reader', 'skill', { category: 'data' })),
  sourced('r', e('weather', 'automation', { description: 'a daily news weather digest' })),
  sourced('r', e('git-server', 'mcp', { tags: ['Daily'] })),
];

describe('store query rules', () => {
  it('locale: exact tag, then the same language, else none', () => {
    const i18n = { 'en-US': { name: 'US' }, 'zh-CN': { name: 'CN' }, en: { name: 'EN' } };
    assert.equal(resolveLocale(i18n, 'en-US')?.name, 'US');
    assert.equal(resolveLocale(i18n, 'EN')?.name, 'EN');
    assert.equal(resolveLocale(i18n, 'zh')?.name, 'CN');
    assert.equal(resolveLocale(i18n, 'zh-TW')?.name, 'CN');
    assert.equal(resolveLocale(i18n, 'fr'), null);
    assert.equal(resolveLocale(undefined, 'en'), null);
  });

  it('search matches every word over names, descriptions, tags and i18n names; name matches rank first', () => {
    const r = queryEntries(entries, { search: 'news digest' });
    assert.deepEqual(
      r.items.map((i) => i.slug),
      ['news-digest', 'weather'],
    );
    assert.deepEqual(
      queryEntries(entries, { search: '新闻' }).items.map((i) => i.slug),
      ['news-digest'],
    );
    assert.deepEqual(
      filterEntries(entries, { tags: ['daily'] }).map((i) => i.slug),
      ['news-digest', 'git-server'],
    );
    assert.equal(queryEntries(entries, { search: 'news', locale: 'zh' }).items[0]!.name, '新闻摘要');
  });

  it('type and category filter; groups count every type of the other filters; paging', () => {
    const r = queryEntries(entries, { type: 'automation', pageSize: 1 });
    assert.deepEqual(
      r.items.map((i) => i.slug),
      ['news-digest'],
    );
    assert.deepEqual([r.total, r.hasMore], [2, true]);
    assert.deepEqual(r.groups, [
      { type: 'automation', count: 2, hasMore: true },
      { type: 'skill', count: 1, hasMore: false },
      { type: 'mcp', count: 1, hasMore: false },
    ]);
    const p2 = queryEntries(entries, { type: 'automation', page: 2, pageSize: 1 });
    assert.deepEqual([p2.items[0]!.slug, p2.hasMore], ['weather', false]);
    assert.deepEqual(
      queryEntries(entries, { category: 'data' }).items.map((i) => i.slug),
      ['pdf-reader'],
    );
    assert.equal(queryEntries(entries, { page: 9 }).items.length, 0);
  });

  it('command names are lower-case hyphenated ASCII; other scripts get a stable name', () => {
    assert.equal(commandName('Summarize PDF Files!'), 'summarize-pdf-files');
    assert.equal(commandName('Café  Crème'), 'cafe-creme');
    assert.equal(commandName(''), '');
    assert.equal(commandName(undefined), '');
    assert.match(commandName('知乎回答'), /^skill-[a-z0-9]+$/);
    assert.equal(commandName('知乎回答'), commandName('知乎回答'));
    assert.notEqual(commandName('知乎回答'), commandName('知乎提问'));
  });
});
