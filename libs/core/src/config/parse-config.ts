import {
  type AppConfig,
  type BashMode,
  type BrowserSettings,
  DEFAULT_PORT,
  DEFAULT_STORE_CATALOGS,
  DEFAULT_STORE_SOURCE,
  type FileIoMode,
  type LogLevel,
  type ModelProviderKind,
  PASSWORD_MAX,
  PASSWORD_MIN,
  PUBLIC_CATALOG_PROTOCOLS,
  type PublicCatalogProtocol,
  type ServerRole,
  type StoreCatalogSeed,
} from './app-config.js';
import { examplePasswordProblem } from '../auth/example-passwords.js';
import { parseHostAllowList } from './host-allow-list.js';

export type Env = Readonly<Record<string, string | undefined>>;

export type ConfigResult = { ok: true; config: AppConfig } | { ok: false; errors: string[] };

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];
const ROLES: readonly ServerRole[] = ['all', 'api', 'worker'];
const PROVIDERS: readonly ModelProviderKind[] = ['anthropic', 'openai'];
const FILE_IO_MODES: readonly FileIoMode[] = ['auto', 'pool', 'direct'];

/**
 * Parses the environment into one configuration object. Collects every problem so the
 * operator sees them all in one message instead of fixing them one restart at a time.
 * Pure: path resolution is passed in so the rules stay testable.
 */
export function parseConfig(
  rawEnv: Env,
  opts: { version: string; resolvePath: (p: string) => string; readFile?: (path: string) => string },
): ConfigResult {
  const errors: string[] = [];
  const env = withSecretFiles(rawEnv, SECRET_FILE_VARIABLES, opts.readFile, errors);
  const value = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };

  const portVar = value('PORT') !== undefined ? 'PORT' : 'SVC_SERVER_PORT';
  const port = parseInteger(value(portVar), DEFAULT_PORT);
  if (port === null || port < 0 || port > 65535) {
    errors.push(`${portVar}: must be a port number between 0 and 65535 (got "${env[portVar]}")`);
  }

  const passwordRaw = env.SVC_REMOTE_PASSWORD;
  if (passwordRaw !== undefined && passwordRaw !== '') {
    if (passwordRaw.length < PASSWORD_MIN || passwordRaw.length > PASSWORD_MAX) {
      errors.push(
        `SVC_REMOTE_PASSWORD: must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (got ${passwordRaw.length})`,
      );
    } else if (/\s/.test(passwordRaw)) {
      errors.push('SVC_REMOTE_PASSWORD: must not contain whitespace');
    } else {
      const problem = examplePasswordProblem(passwordRaw);
      if (problem) errors.push(`SVC_REMOTE_PASSWORD: ${problem}`);
    }
  }

  const databaseUrl = value('DATABASE_URL') ?? null;
  if (databaseUrl !== null && !isUrl(databaseUrl, ['postgres:', 'postgresql:'])) {
    errors.push('DATABASE_URL: must be a postgres:// or postgresql:// URL');
  }
  const redisUrl = value('REDIS_URL') ?? null;
  if (redisUrl !== null && !isUrl(redisUrl, ['redis:', 'rediss:'])) {
    errors.push('REDIS_URL: must be a redis:// or rediss:// URL');
  }

  const redisPrefix = value('SVC_REDIS_PREFIX') ?? 'svc';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(redisPrefix)) {
    errors.push('SVC_REDIS_PREFIX: letters, digits and _ . : - only, at most 64 characters');
  }

  const provider = value('SVC_AI_PROVIDER');
  const apiUrl = value('SVC_AI_API_URL');
  const apiKey = value('SVC_AI_API_KEY');
  const model = value('SVC_AI_MODEL');
  if (provider !== undefined && !PROVIDERS.includes(provider as ModelProviderKind)) {
    errors.push(`SVC_AI_PROVIDER: must be one of ${PROVIDERS.join(', ')} (got "${provider}")`);
  }
  if (apiUrl !== undefined && !isUrl(apiUrl, ['http:', 'https:'])) {
    errors.push('SVC_AI_API_URL: must be an http:// or https:// URL');
  }
  const modelSeed =
    provider !== undefined || apiUrl !== undefined || apiKey !== undefined || model !== undefined
      ? { provider: (provider ?? 'anthropic') as ModelProviderKind, apiUrl, apiKey, model }
      : null;

  const storeSources = (value('SVC_STORE_SOURCES') ?? DEFAULT_STORE_SOURCE)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const source of storeSources) {
    // `dhp-v2+<url>` declares a built-in store server (static catalog plus store-server endpoints).
    if (!isUrl(source.replace(/^dhp-v2\+/, ''), ['http:', 'https:'])) {
      errors.push(`SVC_STORE_SOURCES: "${source}" is not an http:// or https:// URL`);
    }
  }

  const catalogsRaw = value('SVC_STORE_CATALOGS');
  const storeCatalogs: StoreCatalogSeed[] = [];
  if (catalogsRaw === undefined) {
    for (const protocol of PUBLIC_CATALOG_PROTOCOLS) {
      storeCatalogs.push({ protocol, url: DEFAULT_STORE_CATALOGS[protocol], enabled: false });
    }
  } else if (catalogsRaw.trim() !== 'none') {
    for (const item of catalogsRaw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')) {
      const eq = item.indexOf('=');
      const protocol = (eq > 0 ? item.slice(0, eq) : item) as PublicCatalogProtocol;
      if (!PUBLIC_CATALOG_PROTOCOLS.includes(protocol)) {
        errors.push(
          `SVC_STORE_CATALOGS: "${item}" must be <protocol>[=<url>], protocol one of ${PUBLIC_CATALOG_PROTOCOLS.join(', ')}`,
        );
        continue;
      }
      const url = eq > 0 ? item.slice(eq + 1) : DEFAULT_STORE_CATALOGS[protocol];
      if (!isUrl(url, ['http:', 'https:'])) {
        errors.push(`SVC_STORE_CATALOGS: "${url}" is not an http:// or https:// URL`);
        continue;
      }
      storeCatalogs.push({ protocol, url: url.replace(/\/+$/, ''), enabled: true });
    }
  }

  const trustProxy = parseBoolean(value('SVC_TRUST_PROXY'));
  if (trustProxy === null) errors.push('SVC_TRUST_PROXY: must be 1 or 0 (true or false)');
  const trustProxyHops = parseInteger(value('SVC_TRUST_PROXY_HOPS'), 1);
  if (trustProxyHops === null || trustProxyHops < 1 || trustProxyHops > 10) {
    errors.push('SVC_TRUST_PROXY_HOPS: must be an integer from 1 to 10');
  }

  let basePath = value('SVC_BASE_PATH') ?? '';
  basePath = basePath.replace(/\/+$/, '');
  if (basePath !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath)) {
    errors.push('SVC_BASE_PATH: must look like /prefix (letters, digits, . _ ~ - segments)');
  }

  const logLevel = (value('LOG_LEVEL') ?? 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) errors.push(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}`);

  const role = (value('SVC_ROLE') ?? 'all').toLowerCase() as ServerRole;
  if (!ROLES.includes(role)) {
    errors.push(`SVC_ROLE: must be one of ${ROLES.join(', ')}`);
  } else if (role !== 'all' && redisUrl === null) {
    errors.push(`SVC_ROLE: "${role}" splits the server across processes and needs REDIS_URL`);
  }

  const wsPingIntervalMs = parseInteger(value('SVC_WS_PING_INTERVAL_MS'), 15_000);
  if (wsPingIntervalMs === null || wsPingIntervalMs < 100) {
    errors.push('SVC_WS_PING_INTERVAL_MS: must be an integer of at least 100');
  }
  const wsSignInTimeoutMs = parseInteger(value('SVC_WS_SIGN_IN_TIMEOUT_MS'), 10_000);
  if (wsSignInTimeoutMs === null || wsSignInTimeoutMs < 100 || wsSignInTimeoutMs > 600_000) {
    errors.push('SVC_WS_SIGN_IN_TIMEOUT_MS: must be an integer from 100 to 600000');
  }
  const queueConcurrency = parseInteger(value('SVC_QUEUE_CONCURRENCY'), 8);
  if (queueConcurrency === null || queueConcurrency < 1 || queueConcurrency > 256) {
    errors.push('SVC_QUEUE_CONCURRENCY: must be an integer from 1 to 256');
  }
  const queueQuickConcurrency = parseInteger(value('SVC_QUEUE_QUICK_CONCURRENCY'), 32);
  if (queueQuickConcurrency === null || queueQuickConcurrency < 1 || queueQuickConcurrency > 256) {
    errors.push('SVC_QUEUE_QUICK_CONCURRENCY: must be an integer from 1 to 256');
  }

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const parsed = parseInteger(value(name), fallback);
    if (parsed === null || parsed < min || parsed > max) {
      errors.push(`${name}: must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return parsed;
  };
  const bash = parseBashMode(value('SVC_AGENT_BASH'));
  if (bash === null) errors.push('SVC_AGENT_BASH: must be 1 (sandboxed), 0 (off) or unsandboxed');
  const bashNetwork = parseBoolean(value('SVC_AGENT_BASH_NETWORK'));
  if (bashNetwork === null) errors.push('SVC_AGENT_BASH_NETWORK: must be 1 or 0');
  const agent = {
    bash: bash ?? 'sandboxed',
    bashNetwork: bashNetwork ?? false,
    bwrapPath: value('SVC_AGENT_BWRAP') ?? '/usr/bin/bwrap',
    bashTimeoutMs: int('SVC_AGENT_BASH_TIMEOUT_MS', 120_000, 1000, 600_000),
    maxSteps: int('SVC_AGENT_MAX_STEPS', 50, 1, 500),
    maxRetries: int('SVC_AGENT_MAX_RETRIES', 4, 0, 10),
    retryBaseMs: int('SVC_AGENT_RETRY_BASE_MS', 1000, 1, 60_000),
    maxOutputTokens: int('SVC_AGENT_MAX_OUTPUT_TOKENS', 16_000, 256, 200_000),
  };

  const appRunsPerProcess = int('SVC_APP_RUNS_PER_PROCESS', 2, 1, 256);
  const teamLimits = {
    maxMessages: int('SVC_TEAM_MAX_MESSAGES', 200, 1, 100_000),
    maxForwardDepth: int('SVC_TEAM_MAX_DEPTH', 8, 1, 1000),
    maxDurationMs: int('SVC_TEAM_MAX_RUN_MS', 2 * 60 * 60 * 1000, 1000, 7 * 24 * 3_600_000),
  };

  const fileWatchPolling = parseBoolean(value('SVC_FILE_WATCH_POLLING'));
  if (fileWatchPolling === null) errors.push('SVC_FILE_WATCH_POLLING: must be 1 or 0');
  const fileIo = (value('SVC_FILE_IO') ?? 'auto').toLowerCase() as FileIoMode;
  if (!FILE_IO_MODES.includes(fileIo)) errors.push('SVC_FILE_IO: must be auto, pool or direct');
  const searchIndexLimit = int('SVC_SEARCH_INDEX_LIMIT', 200_000, 1, 10_000_000);
  const triggerReconcileMs = int('SVC_TRIGGER_RECONCILE_MS', 30_000, 200, 3_600_000);
  const triggerClaimLeaseMs = int('SVC_TRIGGER_CLAIM_LEASE_MS', 60_000, 1000, 3_600_000);
  const triggerPauseAfter = int('SVC_TRIGGER_PAUSE_AFTER', 5, 1, 100);
  const webhookQueueMax = int('SVC_WEBHOOK_QUEUE_MAX', 100, 1, 100_000);
  const scheduleMinIntervalMs = int('SVC_SCHEDULE_MIN_INTERVAL', 60, 0, 86_400) * 1000;
  const backoffText = value('SVC_TRIGGER_BACKOFF_MS') ?? '30000,60000,300000,900000';
  const triggerBackoffMs = backoffText.split(',').map((part) => parseInteger(part.trim(), -1));
  if (triggerBackoffMs.some((ms) => ms === null || ms < 0 || ms > 86_400_000)) {
    errors.push('SVC_TRIGGER_BACKOFF_MS: must be a comma-separated list of integers from 0 to 86400000 (ms)');
  }

  const migrations = (value('SVC_MIGRATIONS') ?? 'run').toLowerCase();
  if (migrations !== 'run' && migrations !== 'skip') errors.push('SVC_MIGRATIONS: must be run or skip');

  const metricsPublic = parseBoolean(value('SVC_METRICS_PUBLIC'));
  if (metricsPublic === null) errors.push('SVC_METRICS_PUBLIC: must be 1 or 0');

  const allowMcpCommands = parseBoolean(value('SVC_ALLOW_MCP_COMMANDS'));
  if (allowMcpCommands === null) errors.push('SVC_ALLOW_MCP_COMMANDS: must be 1 or 0');
  const rootsRaw = value('SVC_SPACE_ROOTS');
  let spaceRoots: string[] | null = null;
  if (rootsRaw !== undefined) {
    spaceRoots = [];
    for (const root of rootsRaw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')) {
      if (!root.startsWith('/')) errors.push(`SVC_SPACE_ROOTS: "${root}" is not an absolute path`);
      else if (root.replace(/\/+$/, '') === '')
        errors.push('SVC_SPACE_ROOTS: the filesystem root cannot be a space root');
      else spaceRoots.push(opts.resolvePath(root));
    }
  }
  const kbImportRoots: string[] = [];
  for (const root of (value('SVC_KB_IMPORT_ROOTS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    if (!root.startsWith('/')) errors.push(`SVC_KB_IMPORT_ROOTS: "${root}" is not an absolute path`);
    else if (root.replace(/\/+$/, '') === '')
      errors.push('SVC_KB_IMPORT_ROOTS: the filesystem root cannot be an import root');
    else kbImportRoots.push(opts.resolvePath(root));
  }
  const mcpAllowRaw = value('SVC_MCP_ALLOW');
  const mcpAllow = parseHostAllowList(mcpAllowRaw);
  if (typeof mcpAllow === 'string') errors.push(`SVC_MCP_ALLOW: ${mcpAllow}`);
  const browser = parseBrowserSettings(value, errors);
  const channelAllow = parseHostAllowList(value('SVC_CHANNEL_ALLOW'));
  if (typeof channelAllow === 'string') errors.push(`SVC_CHANNEL_ALLOW: ${channelAllow}`);
  const publicUrl = value('SVC_PUBLIC_URL') || null;
  if (publicUrl !== null && !isUrl(publicUrl, ['http:', 'https:']))
    errors.push('SVC_PUBLIC_URL: must be an http:// or https:// URL');
  const tracingEndpoint = value('OTEL_EXPORTER_OTLP_ENDPOINT') ?? null;
  if (tracingEndpoint !== null && !/^https?:\/\/[^/\s]+/.test(tracingEndpoint)) {
    errors.push('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL (the collector, without /v1/traces)');
  }

  const secretsKey = value('SVC_SECRETS_KEY') ?? null;
  if (secretsKey !== null && secretsKey.length < SECRETS_KEY_MIN) {
    errors.push(`SVC_SECRETS_KEY: must be at least ${SECRETS_KEY_MIN} characters (got ${secretsKey.length})`);
  }

  const kbVectorCacheMb = int('SVC_KB_VECTOR_CACHE_MB', 512, 0, 1_048_576);

  const testHooks = parseBoolean(value('SVC_TEST_HOOKS'));
  if (testHooks === null) errors.push('SVC_TEST_HOOKS: must be 1 or 0');

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    config: {
      port: port!,
      host: value('HOST') ?? '0.0.0.0',
      dataDir: opts.resolvePath(value('SVC_DATA_DIR') ?? './data'),
      password: { fromEnv: passwordRaw !== undefined && passwordRaw !== '' ? passwordRaw : null },
      databaseUrl,
      redisUrl,
      redisPrefix,
      modelSeed,
      storeSources,
      storeCatalogs,
      trustProxy: trustProxy!,
      trustProxyHops: trustProxyHops!,
      basePath,
      logLevel,
      role,
      wsPingIntervalMs: wsPingIntervalMs!,
      wsSignInTimeoutMs: wsSignInTimeoutMs!,
      queueConcurrency: queueConcurrency!,
      queueQuickConcurrency: queueQuickConcurrency!,
      appRunsPerProcess,
      teamLimits,
      version: opts.version,
      testHooks: testHooks!,
      metricsPublic: metricsPublic!,
      allowMcpCommands: allowMcpCommands!,
      spaceRoots,
      mcpAllow: typeof mcpAllow === 'string' ? [] : [...mcpAllow.entries],
      browser,
      channels: {
        allow: typeof channelAllow === 'string' ? [] : [...channelAllow.entries],
        publicUrl: publicUrl === null ? null : publicUrl.replace(/\/+$/, ''),
      },
      tracingEndpoint,
      migrations: migrations as 'run' | 'skip',
      agent,
      fileWatchPolling: fileWatchPolling!,
      fileIo,
      searchIndexLimit,
      triggerReconcileMs,
      scheduleMinIntervalMs,
      triggerClaimLeaseMs,
      triggerPauseAfter,
      webhookQueueMax,
      triggerBackoffMs: triggerBackoffMs as number[],
      relayTraceFile: value('SVC_RELAY_TRACE') || null,
      secretsKey,
      kbImportRoots,
      kbVectorCacheMb,
    },
  };
}

function parseBrowserSettings(value: (name: string) => string | undefined, errors: string[]): BrowserSettings {
  const list = (name: string): string[] => {
    const parsed = parseHostAllowList(value(name));
    if (typeof parsed === 'string') {
      errors.push(`${name}: ${parsed}`);
      return [];
    }
    return [...parsed.entries];
  };
  const allow = list('SVC_BROWSER_ALLOW');
  const block = list('SVC_BROWSER_BLOCK');
  const executablePath = value('SVC_BROWSER_EXECUTABLE') || null;
  if (executablePath !== null && !executablePath.startsWith('/'))
    errors.push('SVC_BROWSER_EXECUTABLE: must be an absolute path');
  const wsEndpoint = value('SVC_BROWSER_WS_ENDPOINT') || null;
  if (wsEndpoint !== null && !isUrl(wsEndpoint, ['ws:', 'wss:']))
    errors.push('SVC_BROWSER_WS_ENDPOINT: must be a ws:// or wss:// URL (a Playwright browser server)');
  const maxPages = parseInteger(value('SVC_BROWSER_MAX_PAGES'), 20);
  if (maxPages === null || maxPages < 1 || maxPages > 1000)
    errors.push('SVC_BROWSER_MAX_PAGES: must be an integer from 1 to 1000');
  const downloadMaxBytes = parseInteger(value('SVC_BROWSER_DOWNLOAD_MAX_BYTES'), 100 * 1024 * 1024);
  if (downloadMaxBytes === null || downloadMaxBytes < 1)
    errors.push('SVC_BROWSER_DOWNLOAD_MAX_BYTES: must be a positive integer (bytes)');
  const memoryBudgetMb = parseInteger(value('SVC_BROWSER_MEMORY_MB'), 4096);
  if (memoryBudgetMb === null || memoryBudgetMb < 0)
    errors.push('SVC_BROWSER_MEMORY_MB: must be a whole number of megabytes (0: no budget)');
  return {
    allow,
    block,
    executablePath,
    wsEndpoint,
    userAgent: value('SVC_BROWSER_USER_AGENT') || null,
    maxPages: maxPages ?? 20,
    downloadMaxBytes: downloadMaxBytes ?? 0,
    memoryBudgetMb: memoryBudgetMb ?? 4096,
  };
}

/** Variables that may instead be read from a file named by `<NAME>_FILE` (container secrets). */
export const SECRET_FILE_VARIABLES = ['SVC_REMOTE_PASSWORD', 'SVC_AI_API_KEY', 'SVC_SECRETS_KEY'] as const;

/** A shorter SVC_SECRETS_KEY is too easy to guess for a key of data at rest. */
export const SECRETS_KEY_MIN = 16;

/**
 * The environment with each `<NAME>_FILE` replaced by the file's content (trimmed) as
 * `<NAME>`. Setting both, or naming a file that cannot be read, is an error naming the
 * variable (never the content).
 */
function withSecretFiles(
  env: Env,
  names: readonly string[],
  readFile: ((path: string) => string) | undefined,
  errors: string[],
): Env {
  const out: Record<string, string | undefined> = { ...env };
  for (const name of names) {
    const file = env[`${name}_FILE`]?.trim();
    if (!file) continue;
    if (env[name] !== undefined && env[name] !== '') {
      errors.push(`${name}_FILE: set either ${name} or ${name}_FILE, not both`);
      continue;
    }
    if (!readFile) {
      errors.push(`${name}_FILE: files cannot be read here`);
      continue;
    }
    try {
      const content = readFile(file).trim();
      if (content === '') errors.push(`${name}_FILE: ${file} is empty`);
      else out[name] = content;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      errors.push(`${name}_FILE: cannot read ${file}${typeof code === 'string' ? ` (${code})` : ''}`);
    }
  }
  return out;
}

function parseBashMode(raw: string | undefined): BashMode | null {
  if (raw === undefined) return 'sandboxed';
  if (raw.toLowerCase() === 'unsandboxed') return 'unsandboxed';
  const on = parseBoolean(raw);
  return on === null ? null : on ? 'sandboxed' : 'off';
}

function parseInteger(raw: string | undefined, fallback: number): number | null {
  if (raw === undefined) return fallback;
  return /^\d+$/.test(raw) ? Number(raw) : null;
}

function parseBoolean(raw: string | undefined): boolean | null {
  if (raw === undefined) return false;
  const v = raw.toLowerCase();
  if (v === '1' || v === 'true' || v === 'yes') return true;
  if (v === '0' || v === 'false' || v === 'no') return false;
  return null;
}

function isUrl(raw: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(raw).protocol);
  } catch {
    return false;
  }
}
