import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors/domain-error.js';
import {
  conversationKey,
  EPHEMERAL_IDLE_MS_WITH_REPLICAS,
  ephemeralSweepIdleMs,
  isConversationId,
  isUuid,
  mergeMeta,
  normalizeMeta,
  normalizeThoughts,
  normalizeTitle,
  parseConversationId,
  parseMetaPatch,
  parsePinPatch,
  parseReasoningEffort,
  parseRole,
} from './conversation-rules.js';

const SOURCE = '3f2c8a4e-1b7d-4c61-9a2e-5d8f0b6c7e91';

function invalid(fn: () => unknown, field: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.kind, 'invalid');
    assert.match(err.message, field);
    return true;
  });
}

describe('conversation rules', () => {
  it('isUuid accepts UUIDs of any version and nothing else', () => {
    assert.equal(isUuid(SOURCE), true);
    assert.equal(isUuid(SOURCE.toUpperCase()), true);
    assert.equal(isUuid('00000000-0000-0000-0000-000000000000'), true);
    for (const bad of ['', 'svc-temp', `${SOURCE}x`, SOURCE.replace(/-/g, ''), 42, null, undefined]) {
      assert.equal(isUuid(bad), false, String(bad));
    }
  });

  it('conversation ids: UUIDs, app-chat:<appId> and callers’ thread ids; nothing unsafe in a path, log or key', () => {
    const good = [
      SOURCE,
      SOURCE.toUpperCase(),
      `app-chat:${SOURCE}`,
      'user-42',
      'customer_7:thread.3',
      'alice@example.com',
      'a',
      'x'.repeat(128),
    ];
    for (const id of good) assert.equal(isConversationId(id), true, id);
    const bad = [
      '',
      'x'.repeat(129),
      '.hidden',
      '..',
      '-flag',
      ':colon-first',
      'has space',
      'slash/in',
      'back\\slash',
      'percent%2F',
      'new\nline',
      'nul\u0000',
      'ünïcode',
      'emoji😀',
      42,
      null,
      undefined,
    ];
    for (const id of bad) assert.equal(isConversationId(id), false, JSON.stringify(id));
  });

  it('conversationKey: a UUID in any case names the same (lower-case) record; other ids are kept as given', () => {
    assert.equal(conversationKey(SOURCE.toUpperCase()), SOURCE);
    assert.equal(conversationKey(`app-chat:${SOURCE.toUpperCase()}`), `app-chat:${SOURCE.toUpperCase()}`);
    assert.equal(conversationKey('User-42'), 'User-42');
    assert.equal(conversationKey('../etc'), null);
  });

  it('parseConversationId names the field of an unusable id', () => {
    assert.equal(parseConversationId('app-chat:abc'), 'app-chat:abc');
    invalid(() => parseConversationId('bad id'), /^conversationId must be 1 to 128/);
    invalid(() => parseConversationId(7, 'id'), /^id must be/);
  });

  it('titles are trimmed strings of 1 to 500 characters', () => {
    assert.equal(normalizeTitle('  Plan  '), 'Plan');
    invalid(() => normalizeTitle(5), /^title/);
    invalid(() => normalizeTitle(null), /^title/);
    invalid(() => normalizeTitle('   '), /^title/);
    invalid(() => normalizeTitle('x'.repeat(501)), /^title/);
    assert.equal(normalizeTitle('x'.repeat(500)).length, 500);
  });

  it('reasoning effort and role are closed sets, named in the error', () => {
    for (const e of ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])
      assert.equal(parseReasoningEffort(e), e);
    invalid(() => parseReasoningEffort('extreme'), /^reasoningEffort must be one of: off, minimal/);
    for (const r of ['user', 'assistant', 'system']) assert.equal(parseRole(r), r);
    invalid(() => parseRole('tool'), /^role/);
    invalid(() => parseRole(undefined), /^role/);
  });

  it('a pin is both fields or neither; null for both removes it; the source must be a UUID', () => {
    assert.equal(parsePinPatch(undefined, undefined), undefined);
    assert.equal(parsePinPatch(null, null), null);
    assert.deepEqual(parsePinPatch(SOURCE.toUpperCase(), 'claude-x'), { modelSourceId: SOURCE, modelId: 'claude-x' });
    invalid(() => parsePinPatch(SOURCE, undefined), /together/);
    invalid(() => parsePinPatch(undefined, 'm'), /together/);
    invalid(() => parsePinPatch(null, 'm'), /both be null/);
    invalid(() => parsePinPatch('not-a-uuid', 'm'), /^modelSourceId must be a UUID/);
    invalid(() => parsePinPatch(SOURCE, ''), /^modelId/);
    invalid(() => parsePinPatch(SOURCE, 7), /^modelId/);
  });

  it('thoughts keep every field given and get default content and timestamp', () => {
    const now = new Date('2025-01-01T12:00:00.000Z');
    const [a, b] = normalizeThoughts(
      [
        { id: 't1', type: 'thinking', content: 'hmm' },
        { id: 't2', type: 'tool_use', toolName: 'Read', toolInput: { file_path: 'a' }, toolOutput: ['x'], extra: 1 },
      ],
      now,
    );
    assert.deepEqual(a, { id: 't1', type: 'thinking', content: 'hmm', timestamp: now.toISOString() });
    assert.deepEqual(b, {
      id: 't2',
      type: 'tool_use',
      content: '',
      timestamp: now.toISOString(),
      toolName: 'Read',
      toolInput: { file_path: 'a' },
      toolOutput: ['x'],
      extra: 1,
    });
    assert.deepEqual(normalizeThoughts([], now), []);
    invalid(() => normalizeThoughts({}, now), /^thoughts must be an array/);
    invalid(() => normalizeThoughts(['x'], now), /^thoughts\[0\]/);
    invalid(() => normalizeThoughts([{ type: 'thinking' }], now), /^thoughts\[0\]\.id/);
    invalid(() => normalizeThoughts([{ id: 'a', type: 'x' }, { id: 'b' }], now), /^thoughts\[1\]\.type/);
    invalid(() => normalizeThoughts([{ id: 'a', type: 'x', content: 3 }], now), /content/);
    invalid(() => normalizeThoughts([{ id: 'a', type: 'x', toolInput: 'ls' }], now), /toolInput/);
  });

  it('meta drops nulls, refuses reserved keys; a patch merges shallowly and null removes a key', () => {
    assert.deepEqual(normalizeMeta(undefined), {});
    assert.deepEqual(normalizeMeta({ error: 'x', images: null }), { error: 'x' });
    invalid(() => normalizeMeta({ id: 'x' }), /^id cannot/);
    invalid(() => normalizeMeta([1]), /^meta/);
    const patch = parseMetaPatch({ tokenUsage: { inputTokens: 3 }, error: null });
    assert.deepEqual(mergeMeta({ error: 'boom', images: [1] }, patch), { images: [1], tokenUsage: { inputTokens: 3 } });
    invalid(() => parseMetaPatch({ content: 'x' }), /^content cannot/);
  });

  it('ephemeral sweep: everything in one process, only idle-for-an-hour with replicas', () => {
    assert.equal(ephemeralSweepIdleMs(false), null);
    assert.equal(ephemeralSweepIdleMs(true), EPHEMERAL_IDLE_MS_WITH_REPLICAS);
    assert.equal(EPHEMERAL_IDLE_MS_WITH_REPLICAS, 3_600_000);
  });
});
