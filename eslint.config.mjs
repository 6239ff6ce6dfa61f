// Lint: typescript-eslint's recommended rules plus the hexagon's boundary:
// libs/core holds domain rules and ports only and must not import infrastructure.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const INFRASTRUCTURE = ['typeorm', 'pg', 'bullmq', 'ioredis', 'ws', 'node:fs', 'fs', 'node:fs/promises', 'fs/promises',
  '@electric-sql/pglite', '@electric-sql/pglite-socket', 'express', 'pino', 'pino-http'];

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
        paths: INFRASTRUCTURE.map((name) => ({ name, message: 'libs/core must not import infrastructure; add a port and an adapter in libs/infra.' })),
        patterns: [{ group: ['#infra/*', '../../infra/*', '@electric-sql/*'], message: 'libs/core must not import libs/infra.' }],
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
