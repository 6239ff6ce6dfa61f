import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OpenAPIObject } from '@nestjs/swagger';
import { assistantOperations } from './assistant-listener.js';

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
