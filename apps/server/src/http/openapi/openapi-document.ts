import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { targetConstructorToSchema, validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { PUBLIC_API_PATHS } from '../auth/auth.middleware.js';
import { openBodies, pathParamsDtos, queryDtos } from '../common/validation.js';
import { ERROR_STATUSES, type ErrorStatus, RESPONSE_EXTENSION, type ResponseDoc } from './api-data.js';
import './response-schemas.js';
import { API_GROUPS } from './groups.js';
import { COMPONENTS, type Schema } from './schema.js';

type Operation = {
  parameters?: Array<{ in?: string; name?: string; required?: boolean; description?: string; schema?: unknown }>;
  responses?: Record<string, unknown>;
  [RESPONSE_EXTENSION]?: ResponseDoc;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
  tags?: string[];
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/** The `{success:false, error, code?}` envelope of every failure (docs/api.md, "Answers and errors"). */
const ERROR_ENVELOPE = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { type: 'boolean', const: false },
    error: { type: 'string', description: 'What went wrong, for people' },
    code: {
      type: 'string',
      description: 'Stable code for programs, where one is defined',
      examples: ['LOCKED', 'ALREADY_INSTALLED', 'NOT_INITIALIZED', 'MCP_COMMAND_BLOCKED'],
    },
  },
};
const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

/** The success envelope with `data` as documented by the operation's `@ApiData` (none for `@ApiDone`). */
function successSchema(data: Schema | null): Schema {
  return {
    type: 'object',
    required: data ? ['success', 'data'] : ['success'],
    properties: { success: { type: 'boolean', const: true }, ...(data ? { data } : {}) },
  };
}

/**
 * The OpenAPI 3.1 document, generated from what Nest registered: paths, path and query
 * parameters and body types come from the controllers (@nestjs/swagger's scanner), request
 * body schemas from the DTOs' class-validator decorators (class-validator-jsonschema), so a
 * route or DTO added later appears without extra decorators. What an operation answers comes
 * from its `@ApiData` / `@ApiDone` (api-data.ts): `data` in the success envelope, and the
 * failure statuses in the error envelope. Every operation gets the bearer security unless it
 * is public.
 */
export function buildOpenApiDocument(app: INestApplication, version: string, basePath = ''): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('svc-server API')
    .setDescription(
      'HTTP API of the svc server edition. Every /api request carries `Authorization: Bearer <password>` ' +
        '(or `?token=`) except the public ones marked here. Many failures are HTTP 200 with `success:false`: ' +
        'check `success` as well as the status. Events stream over the WebSocket at `/ws`.',
    )
    .setVersion(version)
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          'The access password itself (`SVC_REMOTE_PASSWORD`, or the one generated at first start), sent on every ' +
          'request as `Authorization: Bearer <password>`: not a token obtained by signing in, and not a JWT.',
      },
      'password',
    )
    .addSecurityRequirements('password')
    // The server's own path prefix (SVC_BASE_PATH): the paths are relative to it.
    .addServer(basePath || '/', basePath ? `This server, under its path prefix ${basePath}` : 'This server')
    .build();
  // The builder's bearer default says JWT; the password is a plain string.
  delete (config.components?.securitySchemes?.password as { bearerFormat?: string } | undefined)?.bearerFormat;
  describeParameterDtos();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
    // Tags are the operation groups (groups.ts), set by @ApiTags on each controller.
    autoTagControllers: false,
  });
  document.tags = groupTags(document);

  const dtoSchemas = validationMetadatasToSchemas({
    classValidatorMetadataStorage: getMetadataStorage(),
    refPointerPrefix: '#/components/schemas/',
  });
  document.components ??= {};
  const schemas = (document.components.schemas ??= {}) as Record<string, unknown>;
  for (const [name, schema] of Object.entries(dtoSchemas)) schemas[name] = schema;
  // An open body may declare no field (an app's configuration): the generator above skips it.
  for (const dto of openBodies()) {
    if (dtoSchemas[dto.name]) continue;
    const schema = targetConstructorToSchema(dto as unknown as new () => unknown, {
      classValidatorMetadataStorage: getMetadataStorage(),
      refPointerPrefix: '#/components/schemas/',
    });
    schemas[dto.name] = { type: 'object', ...schema, properties: schema.properties ?? {} };
  }
  for (const [name, schema] of COMPONENTS) schemas[name] = schema;
  schemas.ErrorEnvelope = ERROR_ENVELOPE;

  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      if (!path.startsWith('/api/')) {
        describeOutsideApi(path, op);
        continue;
      }
      if (PUBLIC_API_PATHS.has(path)) op.security = [];
      const doc = op[RESPONSE_EXTENSION];
      delete op[RESPONSE_EXTENSION];
      // Nest's defaults are bare ("201" for POST even with @HttpCode(200)): say what comes back.
      const responses: Record<string, unknown> = {};
      if (doc?.bytes) {
        responses['200'] = {
          description: 'The bytes',
          content: { [doc.bytes]: { schema: { type: 'string', format: 'binary' } } },
        };
      } else if (doc) {
        const success = successSchema(doc.data);
        responses['200'] = {
          description: doc.failureAs200 ? 'Done, or a failure answered as 200 with success:false' : 'Done',
          content: {
            'application/json': {
              schema: doc.failureAs200 ? { oneOf: [success, { $ref: '#/components/schemas/ErrorEnvelope' }] } : success,
            },
          },
        };
      } else {
        // Caught by test/openapi.e2e-spec.ts: add @ApiData or @ApiDone to the handler.
        responses['200'] = { description: 'Undocumented answer' };
      }
      const statuses = new Set<ErrorStatus>([...(doc?.errors ?? []), 500]);
      if (!PUBLIC_API_PATHS.has(path) || path === '/api/remote/login') statuses.add(401);
      if (op.requestBody) statuses.add(400).add(413);
      if (op.parameters?.some((p) => p.in === 'path')) statuses.add(404);
      for (const code of [...statuses].sort()) responses[String(code)] = errorResponse(ERROR_STATUSES[code]);
      op.responses = responses;
    }
  }
  openFreeFormObjects(document);
  // DTOs that no operation uses as a body (query DTOs are parameters; some DTOs are internal).
  dropUnreferenced(schemas, Object.keys(dtoSchemas), document.paths);
  return document;
}

/** Removes the `candidates` among `schemas` that `root` does not reach through `$ref`s. */
function dropUnreferenced(schemas: Record<string, unknown>, candidates: string[], root: unknown): void {
  const reached = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')) {
          const name = child.slice('#/components/schemas/'.length);
          if (!reached.has(name)) {
            reached.add(name);
            visit(schemas[name]);
          }
        } else visit(child);
      }
    }
  };
  visit(root);
  for (const name of candidates) if (!reached.has(name)) delete schemas[name];
}

const COMPOSED = ['properties', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', '$ref'];

/**
 * An object schema that lists no properties (a configuration, a spec, a merge patch) takes any
 * keys: say so (`additionalProperties: true`), as generators read a bare `{type: object}` as an
 * object with no keys at all (openapi-typescript: `Record<string, never>`).
 */
function openFreeFormObjects(value: unknown): void {
  if (Array.isArray(value)) {
    value.forEach(openFreeFormObjects);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const schema = value as Record<string, unknown>;
  const typed = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
  const noProperties = !schema.properties || Object.keys(schema.properties as Record<string, unknown>).length === 0;
  if (typed && noProperties && COMPOSED.every((k) => k === 'properties' || schema[k] === undefined)) {
    schema.additionalProperties = true;
  }
  for (const child of Object.values(schema)) openFreeFormObjects(child);
}

/**
 * Gives each query and path parameters DTO the property metadata @nestjs/swagger's scanner
 * reads (what `@ApiProperty` writes), from its class-validator rules: every field becomes a
 * query (or path) parameter with its schema, required only where the DTO requires it.
 */
function describeParameterDtos(): void {
  for (const dto of [...queryDtos(), ...pathParamsDtos()]) {
    const schema = targetConstructorToSchema(dto as unknown as new () => unknown, {
      classValidatorMetadataStorage: getMetadataStorage(),
      refPointerPrefix: '#/components/schemas/',
    });
    const required = new Set(schema.required ?? []);
    const properties = Object.entries(schema.properties ?? {});
    Reflect.defineMetadata(
      'swagger/apiModelPropertiesArray',
      properties.map(([key]) => `:${key}`),
      dto.prototype,
    );
    for (const [key, property] of properties) {
      Reflect.defineMetadata(
        'swagger/apiModelProperties',
        { ...property, required: required.has(key) },
        dto.prototype,
        key,
      );
    }
  }
}

/** Probes and metrics: no envelope; probes need no token, metrics do unless made public. */
function describeOutsideApi(path: string, op: Operation): void {
  if (path === '/metrics') {
    op.responses = {
      '200': { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } },
      '401': errorResponse('No token or wrong token (unless SVC_METRICS_PUBLIC=1)'),
    };
    return;
  }
  op.security = [];
  if (path.startsWith('/hooks/')) {
    // A message channel's inbound hook keeps its generated `instanceId`; the triggers' `*path`
    // (one or more segments) is not seen by the scanner as a path parameter.
    const channel = path.startsWith('/hooks/channels/');
    if (!channel)
      op.parameters = [
        {
          name: 'path',
          in: 'path',
          required: true,
          description:
            "The subscription's webhook path. A path of several segments (`github/push`) may be sent as one " +
            'segment with its slashes encoded (`github%2Fpush`): the server reads both alike.',
          schema: { type: 'string' },
        },
      ];
    const plain = (description: string) => ({
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    });
    op.requestBody = {
      required: true,
      content: { 'application/json': { schema: { description: 'Any JSON value, at most 256 KB' } } },
    };
    op.responses = {
      '200': {
        description: 'Received (a repeated delivery too); the run is queued',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { ok: { type: 'boolean', const: true }, received: { type: 'boolean', const: true } },
            },
          },
        },
      },
      '400': plain('Body is not JSON'),
      '401': plain('Invalid webhook signature'),
      '404': plain(
        channel
          ? 'No channel instance with this id (or it is turned off)'
          : 'No webhook at this path (or its digital human is paused or uninstalled)',
      ),
      '413': plain('Body over 256 KB'),
    };
    return;
  }
  const status = { type: 'object', properties: { status: { type: 'string' } }, additionalProperties: true };
  op.responses =
    path === '/readyz'
      ? {
          '200': { description: 'Ready', content: { 'application/json': { schema: status } } },
          '503': {
            description: 'Not ready; `checks` says which dependency failed',
            content: { 'application/json': { schema: status } },
          },
        }
      : { '200': { description: 'Alive', content: { 'application/json': { schema: status } } } };
}

/**
 * The document's tag list: the operation groups that some operation uses, in the order of
 * API_GROUPS, with their descriptions; a tag that is not a group is listed last, undescribed
 * (test/openapi.e2e-spec.ts fails for it).
 */
function groupTags(document: OpenAPIObject): Array<{ name: string; description?: string }> {
  const used = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS)
      for (const tag of (item as Record<string, Operation | undefined>)[method]?.tags ?? []) used.add(tag);
  }
  const groups = Object.entries(API_GROUPS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
  const others = [...used].filter((name) => !(name in API_GROUPS)).map((name) => ({ name }));
  return [...groups, ...others];
}
