import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AISource } from '#contracts/models.js';
import { DomainError } from '../errors/domain-error.js';
import {
  type AiSourcesDocument,
  applySeed,
  isSeededSource,
  bumpedTime,
  changedSourceIds,
  mergeSource,
  newSource,
  readSourcesDocument,
  seedDefinition,
  seedSourceId,
  selectForPin,
  validateSourceFields,
} from './model-source-rules.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const VALID = { name: 'Claude', provider: 'anthropic', apiUrl: 'https://api.anthropic.com', model: 'claude-x' };

function invalid(fn: () => unknown, field: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.kind, 'invalid');
    assert.match(err.message, field);
    return true;
  });
}

function source(id: string, extra: Partial<AISource> = {}): AISource {
  return { ...newSource({ ...VALID, provider: 'anthropic', apiKey: `key-${id}` }, id, T0), ...extra };
}

const doc = (sources: AISource[], currentId: string | null = sources[0]?.id ?? null): AiSourcesDocument => ({
  version: 2,
  currentId,
  sources,
  revision: 1,
});

describe('validateSourceFields', () => {
  it('requires name, provider, apiUrl and model to create, naming the field', () => {
    for (const field of ['name', 'provider', 'apiUrl', 'model'] as const) {
      const body: Record<string, unknown> = { ...VALID };
      delete body[field];
      invalid(() => validateSourceFields(body, 'create'), new RegExp(`^${field} is required`));
    }
    invalid(() => validateSourceFields('nope', 'create'), /^body must be a JSON object/);
    invalid(() => validateSourceFields({ ...VALID, name: '   ' }, 'create'), /^name must not be empty/);
    invalid(() => validateSourceFields({ ...VALID, name: 5 }, 'create'), /^name must be a string/);
  });

  it('checks provider, apiUrl, apiKey, authType, id and availableModels', () => {
    invalid(
      () => validateSourceFields({ ...VALID, provider: 'gemini' }, 'create'),
      /^provider must be one of anthropic, openai/,
    );
    invalid(() => validateSourceFields({ ...VALID, apiUrl: 'ftp://x' }, 'create'), /^apiUrl must be an http/);
    invalid(() => validateSourceFields({ ...VALID, apiUrl: 'not a url' }, 'create'), /^apiUrl/);
    invalid(() => validateSourceFields({ ...VALID, apiKey: 42 }, 'create'), /^apiKey must be a string/);
    invalid(() => validateSourceFields({ ...VALID, authType: 'oauth' }, 'create'), /^authType/);
    invalid(() => validateSourceFields({ ...VALID, id: 'a b/c' }, 'create'), /^id must be a UUID/);
    invalid(
      () => validateSourceFields({ ...VALID, availableModels: 'x' }, 'create'),
      /^availableModels must be an array/,
    );
    invalid(
      () => validateSourceFields({ ...VALID, availableModels: [{ name: 'x' }] }, 'create'),
      /^availableModels\[0\]\.id/,
    );
    invalid(
      () => validateSourceFields({ model: '' }, 'update', 'aiSources.sources[3]'),
      /^aiSources\.sources\[3\]\.model/,
    );
  });

  it('normalizes, drops unknown fields, and reads a masked key as "not given"', () => {
    const fields = validateSourceFields(
      {
        ...VALID,
        name: '  Claude  ',
        apiKey: ' sk-1 ',
        availableModels: ['a', { id: 'b', name: 'B', supportsVision: true }, { id: 'a' }],
        createdAt: 'x',
        extra: 1,
      },
      'create',
    );
    assert.deepEqual(fields, {
      name: 'Claude',
      provider: 'anthropic',
      apiUrl: 'https://api.anthropic.com',
      apiKey: 'sk-1',
      model: 'claude-x',
      availableModels: [
        { id: 'a', name: 'a' },
        { id: 'b', name: 'B', supportsVision: true },
      ],
    });
    assert.equal(validateSourceFields({ apiKey: '***' }, 'update').apiKey, undefined);
    assert.equal(validateSourceFields({ apiKey: '' }, 'update').apiKey, '');
    assert.deepEqual(validateSourceFields({}, 'update'), {});
  });
});

describe('newSource and mergeSource', () => {
  it('a new source lists its model, has an empty key by default and equal timestamps', () => {
    const s = newSource(validateSourceFields(VALID, 'create'), 'id-1', T0);
    assert.equal(s.apiKey, '');
    assert.equal(s.authType, 'api-key');
    assert.deepEqual(s.availableModels, [{ id: 'claude-x', name: 'claude-x' }]);
    assert.equal(s.createdAt, new Date(T0).toISOString());
    assert.equal(s.updatedAt, s.createdAt);
  });

  it('merges field by field: an omitted or masked key is kept, "" clears it', () => {
    const s = source('a');
    const renamed = mergeSource(s, validateSourceFields({ name: 'Renamed' }, 'update'), T0 + 1000);
    assert.equal(renamed.name, 'Renamed');
    assert.equal(renamed.apiKey, 'key-a');
    assert.equal(renamed.id, 'a');
    assert.equal(renamed.createdAt, s.createdAt);
    assert.equal(renamed.updatedAt, new Date(T0 + 1000).toISOString());
    assert.equal(mergeSource(s, validateSourceFields({ apiKey: '***' }, 'update'), T0).apiKey, 'key-a');
    assert.equal(mergeSource(s, validateSourceFields({ apiKey: '' }, 'update'), T0).apiKey, '');
    assert.equal(mergeSource(s, validateSourceFields({ apiKey: 'new' }, 'update'), T0).apiKey, 'new');
  });

  it('a stored key stays at its address: a new apiUrl without the key is refused naming the field', () => {
    const s = source('a');
    const moved = validateSourceFields({ apiUrl: 'https://elsewhere.example/v1' }, 'update');
    assert.throws(
      () => mergeSource(s, moved, T0, 'source'),
      (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.match(err.message, /^source\.apiKey is required to change apiUrl/);
        return true;
      },
    );
    const masked = validateSourceFields({ apiUrl: 'https://elsewhere.example/v1', apiKey: '***' }, 'update');
    assert.throws(() => mergeSource(s, masked, T0), /^DomainError|apiKey is required/);
    const given = validateSourceFields({ apiUrl: 'https://elsewhere.example/v1', apiKey: 'k2' }, 'update');
    assert.equal(mergeSource(s, given, T0).apiKey, 'k2');
    assert.equal(
      mergeSource(s, { apiUrl: `${s.apiUrl}/` }, T0).apiKey,
      'key-a',
      'a trailing slash is the same address',
    );
    assert.equal(
      mergeSource({ ...s, apiKey: '' }, moved, T0).apiUrl,
      'https://elsewhere.example/v1',
      'no key, no rule',
    );
  });

  it('a new model joins availableModels; an unchanged merge keeps updatedAt', () => {
    const s = source('a');
    const m = mergeSource(s, { model: 'other' }, T0 + 5);
    assert.deepEqual(
      m.availableModels.map((x) => x.id),
      ['claude-x', 'other'],
    );
    assert.equal(mergeSource(s, { name: s.name }, T0 + 5).updatedAt, s.updatedAt);
  });

  it('bumpedTime is always strictly later', () => {
    const prev = new Date(T0).toISOString();
    assert.equal(bumpedTime(prev, T0 + 10), new Date(T0 + 10).toISOString());
    assert.equal(bumpedTime(prev, T0), new Date(T0 + 1).toISOString());
    assert.equal(bumpedTime(prev, T0 - 99), new Date(T0 + 1).toISOString());
    assert.equal(bumpedTime('garbage', T0), new Date(T0).toISOString());
  });
});

describe('selectForPin', () => {
  const a = source('a', { model: 'ma' });
  const b = source('b', { model: 'mb' });

  it('uses a pinned source that exists, with the pinned model (or its own)', () => {
    const d = doc([a, b], 'a');
    assert.deepEqual(selectForPin(d, { modelSourceId: 'b', modelId: 'pinned' }), { source: b, model: 'pinned' });
    assert.deepEqual(selectForPin(d, { modelSourceId: 'b', modelId: null }), { source: b, model: 'mb' });
    assert.deepEqual(selectForPin(d, { modelSourceId: 'b' }), { source: b, model: 'mb' });
  });

  it('falls back to the current source and its model when the pin names a removed source', () => {
    const d = doc([a, b], 'b');
    assert.deepEqual(selectForPin(d, { modelSourceId: 'gone', modelId: 'old-model' }), { source: b, model: 'mb' });
    assert.deepEqual(selectForPin(d, null), { source: b, model: 'mb' });
    assert.deepEqual(selectForPin(d, { modelSourceId: null, modelId: 'x' }), { source: b, model: 'mb' });
  });

  it('a dangling currentId means the first source; no sources means null', () => {
    assert.deepEqual(selectForPin(doc([a, b], 'gone'), {}), { source: a, model: 'ma' });
    assert.equal(selectForPin(doc([]), { modelSourceId: 'a', modelId: 'x' }), null);
  });
});

describe('seeding', () => {
  it('seeds only when URL or key is set, with per-provider defaults', () => {
    assert.equal(seedDefinition(null), null);
    assert.equal(seedDefinition({ provider: 'openai', model: 'm' }), null);
    assert.deepEqual(seedDefinition({ provider: 'anthropic', apiKey: 'k' }), {
      provider: 'anthropic',
      apiUrl: 'https://api.anthropic.com',
      apiKey: 'k',
      model: 'claude-sonnet-4-5',
    });
    assert.deepEqual(seedDefinition({ provider: 'openai', apiUrl: 'http://h/v1' }), {
      provider: 'openai',
      apiUrl: 'http://h/v1',
      apiKey: '',
      model: 'gpt-4o',
    });
  });

  it('derives a stable UUID from provider, URL and model, not from the key', () => {
    const def = { provider: 'openai', apiUrl: 'http://127.0.0.1:9/v1', model: 'm1' };
    const id = seedSourceId(def);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(seedSourceId({ ...def }), id);
    assert.notEqual(seedSourceId({ ...def, model: 'm2' }), id);
    assert.notEqual(seedSourceId({ ...def, apiUrl: 'http://127.0.0.1:10/v1' }), id);
    assert.notEqual(seedSourceId({ ...def, provider: 'anthropic' }), id);
  });

  it('adds the seeded source beside the stored ones and makes it current; a second run changes nothing', () => {
    const def = { provider: 'openai' as const, apiUrl: 'http://h/v1', apiKey: 'sk-test', model: 'm1' };
    const first = applySeed(doc([source('a'), source('b')], 'b'), def, T0)!;
    assert.deepEqual(
      first.sources.map((s) => s.id),
      ['a', 'b', seedSourceId(def)],
    );
    const seeded = first.sources[2]!;
    assert.deepEqual(seeded, {
      id: seedSourceId(def),
      name: 'openai (env)',
      provider: 'openai',
      authType: 'api-key',
      apiUrl: 'http://h/v1',
      apiKey: 'sk-test',
      model: 'm1',
      availableModels: [{ id: 'm1', name: 'm1' }],
      createdAt: new Date(T0).toISOString(),
      updatedAt: new Date(T0).toISOString(),
    });
    assert.equal(first.currentId, seeded.id);
    assert.equal(applySeed({ ...first, revision: 2 }, def, T0 + 1000), null);
    // Switched to another source over the API: a restart makes the seeded one current again.
    const again = applySeed({ ...first, currentId: 'a', revision: 3 }, def, T0 + 2000)!;
    assert.equal(again.currentId, seeded.id);
    assert.deepEqual(again.sources, first.sources);
  });

  it('a new key keeps the id and createdAt and bumps updatedAt; other sources beside it are kept', () => {
    const def = { provider: 'openai' as const, apiUrl: 'http://h/v1', apiKey: 'sk-1', model: 'm1' };
    const first = applySeed(doc([]), def, T0)!;
    const rotated = applySeed({ ...first, revision: 1 }, { ...def, apiKey: 'sk-2' }, T0 + 60_000)!;
    assert.equal(rotated.sources[0]!.id, first.sources[0]!.id);
    assert.equal(rotated.sources[0]!.apiKey, 'sk-2');
    assert.equal(rotated.sources[0]!.createdAt, first.sources[0]!.createdAt);
    assert.equal(rotated.sources[0]!.updatedAt, new Date(T0 + 60_000).toISOString());
    const crowded = { ...first, sources: [...first.sources, source('x')], revision: 1 };
    assert.equal(applySeed(crowded, def, T0), null);
  });

  it('new values of the variables update the earlier seeded source in place; API sources stay', () => {
    const def = { provider: 'openai' as const, apiUrl: 'http://h/v1', apiKey: 'sk-1', model: 'm1' };
    const first = applySeed(doc([source('a')], 'a'), def, T0)!;
    const moved = applySeed(
      { ...first, sources: [...first.sources, source('z')], revision: 1 },
      { ...def, model: 'm2' },
      T0 + 1,
    )!;
    const newId = seedSourceId({ ...def, model: 'm2' });
    assert.deepEqual(
      moved.sources.map((s) => s.id),
      ['a', newId, 'z'],
    );
    assert.equal(moved.currentId, newId);
    assert.equal(moved.sources[1]!.model, 'm2');
    assert.equal(moved.sources[1]!.createdAt, first.sources[1]!.createdAt);
    assert.equal(isSeededSource(moved.sources[1]!), true);
    assert.equal(isSeededSource(source('a')), false);
  });
});

describe('document helpers', () => {
  it('reads a malformed stored value as no sources and repairs currentId', () => {
    assert.deepEqual(readSourcesDocument(null), { version: 2, currentId: null, sources: [], revision: 0 });
    assert.deepEqual(readSourcesDocument({ sources: 'x', revision: 4 }), {
      version: 2,
      currentId: null,
      sources: [],
      revision: 4,
    });
    const a = source('a');
    assert.equal(readSourcesDocument({ sources: [a, { junk: 1 }], currentId: 'gone', revision: 2 }).currentId, 'a');
    assert.equal(readSourcesDocument({ sources: [a, { junk: 1 }], currentId: 'gone' }).sources.length, 1);
  });

  it('lists the ids of added, removed and changed sources', () => {
    const a = source('a');
    const b = source('b');
    const c = source('c');
    assert.deepEqual(changedSourceIds([a, b], [a, b]), []);
    assert.deepEqual(changedSourceIds([a, b], [{ ...a, updatedAt: 'later' }, c]).sort(), ['b', 'c']);
    assert.deepEqual(changedSourceIds([a], [{ ...a, model: 'new' }]), ['a']);
  });
});
