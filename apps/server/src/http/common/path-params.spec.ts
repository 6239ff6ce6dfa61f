import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ArgumentMetadata } from '@nestjs/common';
import { DomainError } from '#core/errors/domain-error.js';
import { SpaceConversationParams, WebhookPathParams } from './path-params.js';
import { TextParamPipe } from './text-param.pipe.js';
import { createValidationPipe, pathParamsDtos } from './validation.js';

const textPipe = new TextParamPipe();
const validationPipe = createValidationPipe();

/** `@Param() p: Dto` through the global pipes, in the order api-app.ts installs them. */
async function params(metatype: new () => unknown, value: Record<string, unknown>): Promise<Record<string, unknown>> {
  const metadata: ArgumentMetadata = { type: 'param', metatype, data: undefined };
  return { ...((await validationPipe.transform(textPipe.transform(value, metadata), metadata)) as object) };
}

describe('path parameters DTOs', () => {
  it("hand the route's strings to the handler as they came, whatever their format", async () => {
    const value = { spaceId: 'not-a-uuid', conversationId: '' };
    assert.deepEqual(await params(SpaceConversationParams, value), value);
  });

  it('keep only the parameters they declare (so each DTO names all of its route)', async () => {
    assert.deepEqual(await params(SpaceConversationParams, { spaceId: 's', conversationId: 'c', other: 'x' }), {
      spaceId: 's',
      conversationId: 'c',
    });
  });

  it('answer 400 naming the parameter that carries a NUL, the last one of several', async () => {
    const failsWith = (value: Record<string, unknown>, message: string) =>
      assert.rejects(params(SpaceConversationParams, value), (err) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.kind, 'invalid');
        assert.equal(err.message, message);
        return true;
      });
    await failsWith({ spaceId: 'a\u0000', conversationId: 'c' }, 'spaceId must not contain NUL characters');
    await failsWith(
      { spaceId: 'a\u0000', conversationId: 'b\u0000' },
      'conversationId must not contain NUL characters',
    );
    await assert.rejects(params(WebhookPathParams, { path: ['a\u0000', 'b'] }), /path\[0\] must not contain NUL/);
  });

  it('leave anything but strings to the full validation, which refuses it naming the parameter', async () => {
    await assert.rejects(params(SpaceConversationParams, { spaceId: 5, conversationId: 'c' }), (err) => {
      assert.ok(err instanceof DomainError);
      assert.match(err.message, /^spaceId /);
      return true;
    });
  });

  it("take a webhook's path as the list of segments Express hands over", async () => {
    assert.deepEqual(await params(WebhookPathParams, { path: ['github', 'push'] }), { path: ['github', 'push'] });
  });

  it('are all registered for the OpenAPI document', () => {
    assert.ok(pathParamsDtos().includes(SpaceConversationParams));
    assert.ok(pathParamsDtos().length >= 20, `${pathParamsDtos().length}`);
  });
});
