// Lint: typescript-eslint's recommended rules plus the hexagon's boundary:
// libs/core holds domain rules and ports only and must not import infrastructure, nor speak
// HTTP (an outcome or a DomainError kind is mapped to a status at the edge, in apps/server).
// The import graph of libs/core (no cycle between contexts, the floors) is checked by
// scripts/lint-contexts.mjs, the other half of `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const INFRASTRUCTURE = ['typeorm', 'pg', 'bullmq', 'ioredis', 'ws', 'node:fs', 'fs', 'node:fs/promises', 'fs/promises',
  '@electric-sql/pglite', '@electric-sql/pglite-socket', 'express', 'pino', 'pino-http'];

/** Names @nestjs/common offers for HTTP: statuses, HTTP exceptions, response decorators. */
const NEST_HTTP = ['HttpStatus', 'HttpException', 'HttpCode', 'Res', 'Req', 'Header', 'Redirect',
  'BadRequestException', 'UnauthorizedException', 'ForbiddenException', 'NotFoundException', 'ConflictException',
  'GoneException', 'PayloadTooLargeException', 'UnprocessableEntityException', 'InternalServerErrorException',
  'ServiceUnavailableException', 'NotImplementedException', 'RequestTimeoutException', 'MethodNotAllowedException',
  'NotAcceptableException', 'UnsupportedMediaTypeException', 'PreconditionFailedException', 'BadGatewayException',
  'GatewayTimeoutException', 'ImATeapotException', 'MisdirectedException', 'HttpVersionNotSupportedException'];
/** A number that reads as an HTTP status (100 to 599). */
const STATUS_NUMBER = '[value>=100][value<=599]';
const STATUS_KEY = '/^(status|statusCode|httpStatus|httpCode)$/';
const HTTP_STATUS_MESSAGE =
  'libs/core does not name HTTP statuses: answer a domain outcome (or throw a DomainError) and let the controller map it to a status.';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', fetch: 'readonly', performance: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['libs/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...INFRASTRUCTURE.map((name) => ({ name, message: 'libs/core must not import infrastructure; add a port and an adapter in libs/infra.' })),
          { name: '@nestjs/common', importNames: NEST_HTTP, message: HTTP_STATUS_MESSAGE },
        ],
        patterns: [{ group: ['#infra/*', '../../infra/*', '@electric-sql/*'], message: 'libs/core must not import libs/infra.' }],
      }],
      'no-restricted-syntax': ['error',
        // { status: 404 }, { statusCode: 413 }
        { selector: `Property[key.name=${STATUS_KEY}] > Literal.value${STATUS_NUMBER}`, message: HTTP_STATUS_MESSAGE },
        // type Outcome = { status: 400 | 401 }
        { selector: `TSPropertySignature[key.name=${STATUS_KEY}] TSLiteralType > Literal${STATUS_NUMBER}`, message: HTTP_STATUS_MESSAGE },
        // x.status = 404
        { selector: `AssignmentExpression[left.property.name=${STATUS_KEY}] > Literal.right${STATUS_NUMBER}`, message: HTTP_STATUS_MESSAGE },
        // res.status(404), res.sendStatus(404)
        { selector: `CallExpression[callee.property.name=/^(status|sendStatus)$/] > Literal.arguments${STATUS_NUMBER}`, message: HTTP_STATUS_MESSAGE },
      ],
    },
  },
  {
    // The HTTP edge takes every body, query and set of path parameters as one DTO
    // (`@Param() { spaceId }: SpaceIdParams`, http/common/path-params.ts), never one named value.
    files: ['apps/server/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'Decorator > CallExpression[callee.name=/^(Param|Query|Body)$/][arguments.length>0]',
        message: 'Take the whole body, query or set of path parameters as a DTO: @Param() { spaceId }: SpaceIdParams (http/common/path-params.ts).',
      }],
    },
  },
  {
    files: ['libs/contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['#core/*', '#infra/*', '#testing/*'], message: 'contracts are leaf wire types.' }] }],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'bench/**/*.ts', 'bench/**/*.mjs'],
    rules: { 'no-console': 'off' },
  },
);
