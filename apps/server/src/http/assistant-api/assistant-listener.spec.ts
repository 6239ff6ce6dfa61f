import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OpenAPIObject } from '@nestjs/swagger';
import { assistantOperations, isRelayed } from './assistant-listener.js';

describe('assistantOperations', () => {
  it('takes the operations marked x-svc-assistant, path parameters matching one segment', () => {
    const doc = {
      paths: {
        '/api/spaces': { get: { 'x-svc-assistant': true }, post: {} },
        '/api/spaces/{spaceId}': { get: { 'x-svc-assistant': true }, delete: {} },
      },
    } as unknown as OpenAPIObject;
    const ops = assistantOperations(doc);
    assert.deepEqual(
      ops.map((o) => `${o.method} ${o.template}`),
      ['GET /api/spaces', 'GET /api/spaces/{spaceId}'],
    );
    const byId = ops[1]!.pattern;
    assert.ok(byId.test('/api/spaces/abc-1'));
    assert.ok(!byId.test('/api/spaces/abc/conversations'));
    assert.ok(!byId.test('/api/spaces/'));
    assert.ok(!ops[0]!.pattern.test('/api/spacesX'));
  });
});

describe('isRelayed', () => {
  it("lets through only the listener's own token", () => {
    assert.equal(isRelayed('tok-123', 'tok-123'), true);
    assert.equal(isRelayed('tok-124', 'tok-123'), false);
    assert.equal(isRelayed('tok', 'tok-123'), false);
    assert.equal(isRelayed(undefined, 'tok-123'), false);
    assert.equal(isRelayed(['tok-123'], 'tok-123'), false);
    assert.equal(isRelayed('tok-123', null), false, 'nothing before the listener is up');
  });
});
