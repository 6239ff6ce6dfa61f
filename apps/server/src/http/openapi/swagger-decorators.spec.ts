import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as swagger from '@nestjs/swagger';
import { DECORATORS } from '@nestjs/swagger';
import * as ours from './swagger-decorators.js';

/** Decorates two like classes, one with @nestjs/swagger's decorators and one with ours. */
function decorate(api: typeof ours | typeof swagger): { cls: object; method: object } {
  @api.ApiTags('Webhooks')
  @api.ApiConsumes('application/json')
  class Controller {
    @api.ApiTags('More')
    @api.ApiConsumes('application/octet-stream')
    @api.ApiBody({ schema: { type: 'string', format: 'binary', description: 'bytes' } })
    @api.ApiOperation({ summary: 'Deliver', description: 'A longer text' })
    @api.ApiExtension('x-svc-response', { data: null, errors: [403] })
    @api.ApiExtension('x-svc-assistant', true)
    @api.ApiExtension('x-svc-response', { data: { type: 'string' }, errors: [] })
    handle(): void {}
  }
  return { cls: Controller, method: Controller.prototype.handle };
}

describe('the OpenAPI decorators without @nestjs/swagger', () => {
  it("use @nestjs/swagger's metadata keys", () => {
    assert.equal(ours.SWAGGER_KEYS.extension, DECORATORS.API_EXTENSION);
    assert.equal(ours.SWAGGER_KEYS.tags, DECORATORS.API_TAGS);
    assert.equal(ours.SWAGGER_KEYS.operation, DECORATORS.API_OPERATION);
    assert.equal(ours.SWAGGER_KEYS.consumes, DECORATORS.API_CONSUMES);
    assert.equal(ours.SWAGGER_KEYS.parameters, DECORATORS.API_PARAMETERS);
  });

  it("write what @nestjs/swagger's own decorators write", () => {
    const theirs = decorate(swagger);
    const mine = decorate(ours);
    for (const key of Object.values(ours.SWAGGER_KEYS)) {
      assert.deepEqual(Reflect.getMetadata(key, mine.cls), Reflect.getMetadata(key, theirs.cls), `class ${key}`);
      assert.deepEqual(Reflect.getMetadata(key, mine.method), Reflect.getMetadata(key, theirs.method), `method ${key}`);
    }
    // Decorators apply bottom-up: the lowest of two with one key wins, as in @nestjs/swagger.
    assert.deepEqual(Reflect.getMetadata(DECORATORS.API_EXTENSION, mine.method), {
      'x-svc-response': { data: { type: 'string' }, errors: [] },
      'x-svc-assistant': true,
    });
  });
});
