import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AISource } from '#contracts/models.js';
import { DomainError } from '../errors/domain-error.js';
import { mergeAiSourcesBranch, mergeBranches, parseConfigPatch, readConfigDocument } from './configuration-rules.js';
import { type AiSourcesDocument, newSource } from './model-source-rules.js';
import { maskSecrets } from './secret-masking.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const BASE = { name: 'S', provider: 'openai' as const, apiUrl: 'http://h/v1', model: 'm' };

function invalid(fn: () => unknown, message: RegExp): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof DomainError && err.kind === 'invalid' && message.test(err.message),
  );
}

function source(id: string, apiKey = `key-${id}`): AISource {
  return newSource({ ...BASE, apiKey }, id, T0);
}

const stored = (sources: AISource[], currentId: string | null = sources[0]?.id ?? null): AiSourcesDocument => ({
  version: 2,
  currentId,
  sources,
  revision: 3,
});

let counter = 0;
const newId = (): string => `gen-${++counter}`;

describe('parseConfigPatch', () => {
  it('takes a JSON object, splitting off aiSources', () => {
    const patch = parseConfigPatch({ aiSources: { currentId: 'a' }, memory: { enabled: false }, gone: null });
    assert.deepEqual(patch, { aiSources: { currentId: 'a' }, branches: { memory: { enabled: false }, gone: null } });
    invalid(() => parseConfigPatch([1]), /^body must be a JSON object/);
    invalid(() => parseConfigPatch(null), /^body must be a JSON object/);
    invalid(() => parseConfigPatch({ aiSources: [] }), /^aiSources must be an object/);
    invalid(() => parseConfigPatch({ aiSources: null }), /^aiSources must be an object/);
    invalid(() => parseConfigPatch(JSON.parse('{"__proto__": {"x": 1}}')), /__proto__ is not an allowed/);
  });

  it('refuses a new access password but ignores an echoed remoteAccess branch', () => {
    invalid(
      () => parseConfigPatch({ remoteAccess: { password: 'NewPassw0rd!' } }),
      /^remoteAccess\.password cannot be changed/,
    );
    assert.deepEqual(parseConfigPatch({ remoteAccess: { enabled: true, password: '***' } }), { branches: {} });
    assert.deepEqual(parseConfigPatch({ remoteAccess: { enabled: false } }), { branches: {} });
  });
});

describe('mergeBranches', () => {
  it('replaces named branches whole, removes null ones, keeps the others', () => {
    const before = { memory: { enabled: true, cadence: 'x' }, keep: 1, drop: 2 };
    assert.deepEqual(mergeBranches(before, { memory: { enabled: false }, drop: null, add: [1] }), {
      memory: { enabled: false },
      keep: 1,
      add: [1],
    });
  });

  it('restores masked secrets from the stored branch (a read sent back changes nothing)', () => {
    const before = { mcpServers: { gh: { env: { GITHUB_TOKEN: 'ghp_1' }, args: ['a'] } } };
    const echoed = maskSecrets(before);
    assert.deepEqual(mergeBranches(before, echoed), before);
    assert.deepEqual(mergeBranches(before, { mcpServers: { gh: { env: { GITHUB_TOKEN: 'ghp_2' } } } }), {
      mcpServers: { gh: { env: { GITHUB_TOKEN: 'ghp_2' } } },
    });
  });
});

describe('mergeAiSourcesBranch', () => {
  it('replaces the sources; a masked or omitted apiKey keeps the stored key', () => {
    const a = source('a');
    const b = source('b');
    const masked = maskSecrets({ sources: [a, b] });
    const next = mergeAiSourcesBranch(
      stored([a, b]),
      { sources: [masked.sources[1], { ...masked.sources[0], apiKey: undefined, name: 'A2' }] },
      T0 + 1000,
      newId,
    );
    assert.deepEqual(
      next.sources.map((s) => [s.id, s.apiKey, s.name]),
      [
        ['b', 'key-b', 'S'],
        ['a', 'key-a', 'A2'],
      ],
    );
    assert.equal(next.sources[0]!.updatedAt, b.updatedAt, 'unchanged source keeps updatedAt');
    assert.equal(next.sources[1]!.createdAt, a.createdAt);
    assert.equal(next.sources[1]!.updatedAt, new Date(T0 + 1000).toISOString());
    assert.equal(next.currentId, 'a', 'current kept while it exists');
  });

  it('adds new sources (generated id when none, masked key reads as none) and drops missing ones', () => {
    const next = mergeAiSourcesBranch(
      stored([source('a')]),
      {
        sources: [
          { ...BASE, apiKey: '***' },
          { ...BASE, id: 'c', apiKey: 'k-c' },
        ],
      },
      T0,
      newId,
    );
    assert.match(next.sources[0]!.id, /^gen-/);
    assert.equal(next.sources[0]!.apiKey, '');
    assert.equal(next.sources[1]!.apiKey, 'k-c');
    assert.equal(next.currentId, next.sources[0]!.id, 'the removed current one gives way to the first');
    assert.deepEqual(mergeAiSourcesBranch(stored([source('a')]), { sources: [] }, T0, newId), {
      version: 2,
      currentId: null,
      sources: [],
    });
  });

  it('sets currentId only to a listed source; checks version, items and duplicate ids', () => {
    const doc = stored([source('a'), source('b')]);
    assert.equal(mergeAiSourcesBranch(doc, { currentId: 'b' }, T0, newId).currentId, 'b');
    invalid(() => mergeAiSourcesBranch(doc, { currentId: 'zzz' }, T0, newId), /^aiSources\.currentId/);
    invalid(() => mergeAiSourcesBranch(doc, { currentId: 5 }, T0, newId), /^aiSources\.currentId/);
    invalid(() => mergeAiSourcesBranch(doc, { version: 1 }, T0, newId), /^aiSources\.version must be 2/);
    invalid(() => mergeAiSourcesBranch(doc, { sources: {} }, T0, newId), /^aiSources\.sources must be an array/);
    invalid(
      () => mergeAiSourcesBranch(doc, { sources: [{ ...BASE, provider: 'x' }] }, T0, newId),
      /^aiSources\.sources\[0\]\.provider/,
    );
    invalid(
      () =>
        mergeAiSourcesBranch(
          doc,
          {
            sources: [
              { ...BASE, id: 'q' },
              { ...BASE, id: 'q' },
            ],
          },
          T0,
          newId,
        ),
      /^aiSources\.sources\[1\]\.id repeats/,
    );
  });
});

describe('readConfigDocument', () => {
  it('reads anything malformed as empty', () => {
    assert.deepEqual(readConfigDocument(undefined), { revision: 0, branches: {} });
    assert.deepEqual(readConfigDocument({ revision: 2, branches: [1] }), { revision: 2, branches: {} });
    assert.deepEqual(readConfigDocument({ revision: 2, branches: { a: 1 } }), { revision: 2, branches: { a: 1 } });
  });
});
