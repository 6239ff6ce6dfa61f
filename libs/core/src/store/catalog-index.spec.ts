import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSafeRelativePath, isSlug, parseIndexDocuments, validateEntry } from './catalog-index.js';

const entry = (extra: Record<string, unknown> = {}) => ({
  slug: 'price-watcher',
  name: 'Price Watcher',
  version: '1.0.0',
  author: 'alice',
  description: 'Watches prices.',
  type: 'automation',
  path: 'packages/price-watcher',
  ...extra,
});

describe('catalog index rules', () => {
  it('slugs are id or author/id in lower-case letters, digits and -', () => {
    for (const ok of ['a', 'price-watcher', 'alice/price-watcher', 'x1']) assert.ok(isSlug(ok), ok);
    for (const bad of ['', 'Price', 'a/b/c', '-a', 'a b', 'a_b', '../x', 'a/']) assert.ok(!isSlug(bad), bad);
  });

  it('entry paths stay under the source', () => {
    assert.ok(isSafeRelativePath('packages/x'));
    for (const bad of ['', '/etc', '../x', 'a/../b', 'C:/x', 'a\\b', 'a//b']) assert.ok(!isSafeRelativePath(bad), bad);
  });

  it('validates required fields and type, defaults category and tags', () => {
    const ok = validateEntry(entry());
    assert.ok(typeof ok !== 'string');
    assert.deepEqual([ok.category, ok.tags], ['other', []]);
    assert.match(validateEntry(entry({ name: '' })) as string, /name is required/);
    assert.match(validateEntry(entry({ type: 'robot' })) as string, /type must be one of/);
    assert.match(validateEntry(entry({ slug: 'Bad Slug' })) as string, /slug/);
    assert.match(validateEntry(entry({ path: '../up' })) as string, /path/);
    assert.match(validateEntry(entry({ download_url: 'file:///etc/passwd' })) as string, /download_url/);
    assert.match(validateEntry(entry({ requires_skills: [1] })) as string, /requires_skills/);
    assert.match(validateEntry('x') as string, /not an object/);
  });

  it('skips oversized entries: a long text field at any depth, too many or long tags, a huge entry', () => {
    const long = 'x'.repeat(10_001);
    assert.match(validateEntry(entry({ description: long })) as string, /^description is longer than 10000/);
    assert.match(validateEntry(entry({ i18n: { de: { description: long } } })) as string, /^i18n\.de\.description/);
    assert.match(validateEntry(entry({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) })) as string, /50 tags/);
    assert.match(validateEntry(entry({ tags: ['y'.repeat(65)] })) as string, /64 characters/);
    const meta = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'z'.repeat(5000)]));
    assert.match(validateEntry(entry({ meta })) as string, /larger than 65536 characters/);
    assert.ok(typeof validateEntry(entry({ description: 'd'.repeat(10_000) })) !== 'string');
  });

  it('skips and counts bad entries and repeated slugs; a bad document is invalid as a whole', () => {
    const parsed = parseIndexDocuments([
      { version: 1, apps: [entry(), entry({ slug: 'other' }), entry({ type: 'x' }), entry(), null] },
    ]);
    assert.deepEqual(
      parsed?.entries.map((e) => e.slug),
      ['price-watcher', 'other'],
    );
    assert.equal(parsed?.skipped, 3);
    assert.equal(parseIndexDocuments([{ version: 2, apps: [] }]), null);
    assert.equal(parseIndexDocuments([{ version: 1 }]), null);
    assert.equal(parseIndexDocuments([[]]), null);
    assert.deepEqual(parseIndexDocuments([{ version: 1, apps: [] }])?.entries, []);
  });
});
