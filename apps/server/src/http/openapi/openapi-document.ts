import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { PUBLIC_API_PATHS } from '../auth/auth.middleware.js';
import { DOCUMENTED_BODIES } from './documented-bodies.js';

type Operation = {
  responses?: Record<string, unknown>;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
  tags?: string[];
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/** The `{success:false, error, code?}` envelope of every failure (spec doc 1, "Errors"). */
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
const SUCCESS_ENVELOPE = {
  type: 'object',
  required: ['success'],
  properties: {
    success: { type: 'boolean', const: true },
    data: { description: 'The result; its shape is given per operation where documented' },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

/** Failures every operation can answer, by status (spec doc 1, "Errors"). */
const COMMON_ERRORS: Record<string, string> = {
  '400': 'Missing or invalid input',
  '401': 'No token or wrong token',
  '403': 'Path outside allowed folders or a feature turned off',
  '404': 'Id does not exist',
  '413': 'Request body too large (100 KB)',
  '500': 'Internal error',
};

/**
 * The OpenAPI 3.1 document, generated from what Nest registered: paths, path and query
 * parameters and body types come from the controllers (@nestjs/swagger's scanner), request
 * body schemas from the DTOs' class-validator decorators (class-validator-jsonschema), so a
 * route or DTO added later appears without extra decorators. Every operation gets the
 * success and error envelopes and the bearer security unless it is public.
 */
export function buildOpenApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('svc-server API')
    .setDescription(
      'HTTP API of the svc server edition. Every /api request carries `Authorization: Bearer <password>` ' +
        '(or `?token=`) except the public ones marked here. Many failures are HTTP 200 with `success:false`: ' +
        'check `success` as well as the status. Events stream over the WebSocket at `/ws`.',
    )
    .setVersion(version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The access password' }, 'password')
    .addSecurityRequirements('password')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
    autoTagControllers: true,
  });

  const dtoSchemas = validationMetadatasToSchemas({
    classValidatorMetadataStorage: getMetadataStorage(),
    refPointerPrefix: '#/components/schemas/',
  });
  document.components ??= {};
  const schemas = (document.components.schemas ??= {}) as Record<string, unknown>;
  for (const [name, schema] of Object.entries(dtoSchemas)) schemas[name] = schema;
  schemas.ErrorEnvelope = ERROR_ENVELOPE;
  schemas.SuccessEnvelope = SUCCESS_ENVELOPE;

  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      if (!path.startsWith('/api/')) {
        describeOutsideApi(path, op);
        continue;
      }
      if (PUBLIC_API_PATHS.has(path)) op.security = [];
      const documented = DOCUMENTED_BODIES[`${method.toUpperCase()} ${path}`];
      if (documented && !op.requestBody) {
        op.requestBody = { required: true, content: { 'application/json': { schema: documented } } };
      }
      const responses = (op.responses ??= {});
      // Nest's defaults are bare ("201" for POST even with @HttpCode(200)): say what comes back.
      for (const code of Object.keys(responses)) {
        if (/^2/.test(code)) delete responses[code];
      }
      responses['200'] = {
        description: 'Handled; check `success` (a failure may also come back as 200 with success:false)',
        content: {
          'application/json': {
            schema: {
              oneOf: [{ $ref: '#/components/schemas/SuccessEnvelope' }, { $ref: '#/components/schemas/ErrorEnvelope' }],
            },
          },
        },
      };
      for (const [code, description] of Object.entries(COMMON_ERRORS)) responses[code] ??= errorResponse(description);
      if (path === '/api/remote/login') responses['429'] = errorResponse('Sign-in locked (code LOCKED, Retry-After)');
    }
  }
  return document;
}

/** Probes and metrics: no envelope; probes need no token, metrics do unless made public. */
function describeOutsideApi(path: string, op: Operation): void {
  if (path === '/metrics') {
    op.tags = ['Operations'];
    op.responses = {
      '200': { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } },
      '401': errorResponse('No token or wrong token (unless SVC_METRICS_PUBLIC=1)'),
    };
    return;
  }
  op.security = [];
  op.tags = ['Operations'];
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
