import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationPipe } from '@nestjs/common';
import { getMetadataStorage, IsOptional, IsString } from 'class-validator';
import { DomainError } from '#core/errors/domain-error.js';
import { ArrayBodyAsEmpty, Check, createValidationPipe, Documented, OpenBody } from './validation.js';

const nonBlank = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

@ArrayBodyAsEmpty()
class Sequential {
  @Check(nonBlank, 'first is required and must be a string', { type: 'string' })
  first: string;

  @IsOptional()
  @Check((v) => typeof v === 'string', 'second must be a string', { type: 'string' })
  second?: string | null;

  @Documented({ type: 'string' })
  later?: unknown;
}

class Plain {
  @IsString()
  a: string;

  @IsString()
  b: string;
}

@OpenBody({ description: 'A merge patch' })
class Patch {
  [key: string]: unknown;

  @Documented({ type: 'string' })
  known?: unknown;

  @IsOptional()
  @Check((v) => typeof v === 'number', 'count must be a number', { type: 'number' })
  count?: unknown;
}

const pipe = createValidationPipe();
const run = (metatype: new () => unknown, value: unknown) => pipe.transform(value, { type: 'body', metatype });

async function failsWith(promise: Promise<unknown>, message: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DomainError);
    assert.equal(err.kind, 'invalid');
    assert.equal(err.message, message);
    return true;
  });
}

describe('createValidationPipe', () => {
  it('answers the first failing @Check only, in declaration order, with its exact text', async () => {
    await failsWith(run(Sequential, { second: 5 }), 'first is required and must be a string');
    await failsWith(run(Sequential, { first: 'x', second: 5 }), 'second must be a string');
  });

  it('names every failing field of a DTO with ordinary rules', async () => {
    await failsWith(run(Plain, {}), 'a must be a string; b must be a string');
  });

  it('passes a documented field through unjudged and drops unknown fields', async () => {
    const out = (await run(Sequential, { first: 'x', second: null, later: [1], extra: true })) as Record<
      string,
      unknown
    >;
    assert.deepEqual({ ...out }, { first: 'x', second: null, later: [1] });
  });

  it('judges a DTO of @Check rules alone without class-validator, answering what it answers', async () => {
    const full = new ValidationPipe({ whitelist: true, transform: true });
    const storage = getMetadataStorage();
    const lookUp = storage.getTargetValidationMetadatas.bind(storage);
    let lookUps = 0;
    storage.getTargetValidationMetadatas = (...args) => {
      lookUps++;
      return lookUp(...args);
    };
    try {
      await run(Sequential, { first: 'warm' });
      for (const value of [
        { first: 'x' },
        { first: 'x', second: null },
        { first: 'x', second: 'y' },
        { first: 'x', later: 3 },
      ]) {
        lookUps = 0;
        const quick = await run(Sequential, value);
        assert.equal(lookUps, 0, `quick path for ${JSON.stringify(value)}`);
        const judged = await full.transform(value, { type: 'body', metatype: Sequential });
        assert.ok(quick instanceof Sequential);
        assert.deepEqual(quick, judged);
      }
      // Failing, nested or unknown fields: the full validation, with its texts and its whitelist.
      lookUps = 0;
      await failsWith(run(Sequential, { first: ' ' }), 'first is required and must be a string');
      assert.ok(lookUps > 0);
      assert.deepEqual(
        { ...((await run(Sequential, { first: 'x', later: [1], extra: 1 })) as object) },
        {
          first: 'x',
          later: [1],
        },
      );
    } finally {
      storage.getTargetValidationMetadatas = lookUp;
    }
  });

  it('reads an array body as an empty object where the DTO asks, else refuses it', async () => {
    await failsWith(run(Sequential, ['x']), 'first is required and must be a string');
    await failsWith(run(Plain, [{ a: 'x', b: 'y' }]), 'a must be a string; b must be a string');
  });

  it('keeps every key of an open body, judges its declared fields, and passes a non-object through', async () => {
    const body = { known: 'x', other: { deep: [1] }, gone: null };
    assert.equal(await run(Patch, body), body);
    await failsWith(run(Patch, { count: 'many', other: 1 }), 'count must be a number');
    for (const value of [undefined, null, ['x'], 'text', 3]) assert.equal(await run(Patch, value), value);
  });
});
