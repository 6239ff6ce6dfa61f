import { randomInt } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
