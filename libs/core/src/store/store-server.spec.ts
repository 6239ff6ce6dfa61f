import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreListingDto } from '#contracts/store.js';
import { parseCapabilities, parseTaxonomy, resolveLayout } from './store-server.js';

const listing = (slug: string) =>
  ['a', 'b', 'c'].includes(slug) ? ({ slug, name: slug.toUpperCase() } as StoreListingDto) : undefined;

describe('dhp-v2 store-server documents', () => {
  it('capabilities: only what the server turns on', () => {
    assert.deepEqual(parseCapabilities({ installs: true, publish: { enabled: true }, reviewWorkflow: 'yes' }), {
      installs: true,
      publish: true,
      reviewWorkflow: false,
    });
    assert.equal(parseCapabilities([]), null);
  });

  it('taxonomy: a default list plus lists per type; malformed is null', () => {
    assert.deepEqual(
      parseTaxonomy({
        default: [{ id: 'news', labelKey: 'cat.news' }],
        skill: [{ id: 'dev', label: 'Dev', icon: '🛠' }],
      }),
      { default: [{ id: 'news', label: 'cat.news' }], skill: [{ id: 'dev', label: 'Dev', icon: '🛠' }] },
    );
    assert.equal(parseTaxonomy({ skill: [] }), null);
    assert.equal(parseTaxonomy({ default: [{ label: 'no id' }] }), null);
  });

  it('layout: slugs resolved to listings, unknown ones left out, paged per node', () => {
    const page = resolveLayout(
      {
        version: 2,
        nodes: [
          { type: 'hero', title: 'Picks', entries: ['a', 'zzz', { slug: 'b' }, 'c'] },
          { type: 'collections', collections: [{ id: 'x' }] },
        ],
      },
      listing,
      2,
    );
    assert.deepEqual(page, {
      version: 2,
      nodes: [
        { type: 'hero', title: 'Picks', entries: [listing('a'), listing('b')], hasMore: true },
        { type: 'collections', collections: [{ id: 'x' }] },
      ],
    });
    assert.equal(resolveLayout({ nodes: [{ title: 'no type' }] }, listing, 5), null);
    assert.equal(resolveLayout('x', listing, 5), null);
  });
});
