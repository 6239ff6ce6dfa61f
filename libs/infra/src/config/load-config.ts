import { randomBytes, randomInt } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppConfig } from '#core/config/app-config.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '#core/config/app-config.js';
import { type Env, parseConfig } from '#core/config/parse-config.js';
import { generatePassword } from '#core/auth/password.js';

/** Raised when the environment is invalid; the message lists every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function packageVersion(): string {
  // dist/libs/infra/src/config → repository root holds package.json
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'svc-server' && pkg.version) return pkg.version;
    } catch {
      /* keep walking up */
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

/** The only place that reads process.env. */
export function loadConfig(env: Env = process.env): AppConfig {
  const result = parseConfig(env, {
    version: packageVersion(),
    resolvePath: (p) => resolve(p),
    readFile: (p) => readFileSync(p, 'utf8'),
  });
  if (!result.ok) throw new ConfigError(result.errors);
  return result.config;
}

export const PASSWORD_FILE = 'access-password';

export interface ResolvedPassword {
  value: string;
  source: 'env' | 'stored' | 'generated';
  file: string;
}

/**
 * The access password: the environment's, else the one kept in the data folder, else a
 * newly generated one written there (0600, atomically) so it survives restarts.
 */
export function resolveAccessPassword(config: AppConfig): ResolvedPassword {
  const file = join(config.dataDir, PASSWORD_FILE);
  if (config.password.fromEnv !== null) return { value: config.password.fromEnv, source: 'env', file };
  try {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored.length >= PASSWORD_MIN && stored.length <= PASSWORD_MAX)
      return { value: stored, source: 'stored', file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const value = generatePassword(randomInt);
  mkdirSync(config.dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${value}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return { value, source: 'generated', file };
}

export const SECRETS_KEY_FILE = 'secrets-key';

/**
 * The key of data at rest (browser profiles): SVC_SECRETS_KEY, else the one kept in the data
 * folder, else a new random one written there once (0600). Replicas sharing the data folder
 * race for the file with an exclusive link, so they all end up with the same key.
 */
export function resolveSecretsKey(config: AppConfig): { value: string; source: 'env' | 'stored' | 'generated' } {
  if (config.secretsKey !== null) return { value: config.secretsKey, source: 'env' };
  const file = join(config.dataDir, SECRETS_KEY_FILE);
  const stored = readSecretsKey(file);
  if (stored) return { value: stored, source: 'stored' };
  mkdirSync(config.dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  const value = readSecretsKey(file);
  if (!value) throw new Error(`${file}: the generated secrets key could not be read back`);
  return { value, source: 'generated' };
}

function readSecretsKey(file: string): string | null {
  try {
    const value = readFileSync(file, 'utf8').trim();
    return value.length > 0 ? value : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return null;
  }
}
