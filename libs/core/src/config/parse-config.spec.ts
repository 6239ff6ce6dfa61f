import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { describe, it } from 'node:test';
import type { AppConfig } from './app-config.js';
import { DEFAULT_STORE_SOURCE } from './app-config.js';
import { type ConfigResult, type Env, parseConfig } from './parse-config.js';

const CWD = '/srv/app';
const opts = { version: '9.9.9-test', resolvePath: (p: string) => posix.resolve(CWD, p) };

const parse = (env: Env): ConfigResult => parseConfig(env, opts);

function ok(env: Env): AppConfig {
  const result = parse(env);
  if (!result.ok) assert.fail(`expected a valid configuration, got errors: ${result.errors.join(' | ')}`);
  return result.config;
}

function errors(env: Env): string[] {
  const result = parse(env);
  if (result.ok) assert.fail(`expected errors for ${JSON.stringify(env)}, got a valid configuration`);
  return result.errors;
}

/** Exactly one error, and it names `variable` at the start. */
function assertRejectedNaming(env: Env, variable: string): void {
  const errs = errors(env);
  assert.equal(errs.length, 1, `expected one error for ${JSON.stringify(env)}, got ${JSON.stringify(errs)}`);
  assert.ok(errs[0]!.startsWith(`${variable}:`), `error should name ${variable}: ${errs[0]}`);
}

describe('parseConfig', () => {
  describe('defaults', () => {
    it('an empty environment gives the documented defaults', () => {
      const config = ok({});
      assert.equal(config.port, 8080);
      assert.equal(config.host, '0.0.0.0');
      assert.equal(config.dataDir, '/srv/app/data');
      assert.equal(config.role, 'all');
      assert.equal(config.logLevel, 'info');
      assert.equal(config.wsPingIntervalMs, 15_000);
      assert.deepEqual(config.storeSources, [DEFAULT_STORE_SOURCE]);
      assert.equal(config.basePath, '');
      assert.equal(config.databaseUrl, null);
      assert.equal(config.redisUrl, null);
      assert.equal(config.redisPrefix, 'svc');
      assert.equal(config.modelSeed, null);
      assert.deepEqual(config.password, { fromEnv: null });
      assert.equal(config.trustProxy, false);
      assert.equal(config.testHooks, false);
      assert.equal(config.queueConcurrency, 8);
      assert.equal(config.queueQuickConcurrency, 32);
      assert.equal(config.appRunsPerProcess, 2);
      assert.deepEqual(config.teamLimits, { maxMessages: 200, maxForwardDepth: 8, maxDurationMs: 7_200_000 });
      assert.equal(config.scheduleMinIntervalMs, 60_000);
      assert.equal(config.fileIo, 'auto');
      assert.equal(config.version, '9.9.9-test');
    });

    it('SVC_FILE_IO: auto, pool or direct, in any case', () => {
      assert.equal(ok({ SVC_FILE_IO: 'pool' }).fileIo, 'pool');
      assert.equal(ok({ SVC_FILE_IO: 'Direct' }).fileIo, 'direct');
    });

    it('blank values count as unset', () => {
      const config = ok({ PORT: '  ', HOST: '', LOG_LEVEL: ' ', SVC_ROLE: '', SVC_REMOTE_PASSWORD: '' });
      assert.equal(config.port, 8080);
      assert.equal(config.host, '0.0.0.0');
      assert.equal(config.logLevel, 'info');
      assert.equal(config.role, 'all');
      assert.equal(config.password.fromEnv, null);
    });

    it('SVC_DATA_DIR goes through resolvePath', () => {
      assert.equal(ok({ SVC_DATA_DIR: 'state' }).dataDir, '/srv/app/state');
      assert.equal(ok({ SVC_DATA_DIR: '/var/lib/svc' }).dataDir, '/var/lib/svc');
    });
  });

  describe('store catalogs', () => {
    it('unset: the four public catalogs, off; listed: exactly those, on; none: no catalog', () => {
      const unset = ok({});
      assert.deepEqual(
        unset.storeCatalogs.map((c) => [c.protocol, c.enabled]),
        [
          ['mcp-registry', false],
          ['smithery', false],
          ['claude-skills', false],
          ['skillhub', false],
        ],
      );
      const listed = ok({ SVC_STORE_CATALOGS: 'mcp-registry=http://127.0.0.1:9/mcp/,skillhub' });
      assert.deepEqual(listed.storeCatalogs, [
        { protocol: 'mcp-registry', url: 'http://127.0.0.1:9/mcp', enabled: true },
        { protocol: 'skillhub', url: 'https://api.skillhub.cn', enabled: true },
      ]);
      assert.deepEqual(ok({ SVC_STORE_CATALOGS: 'none' }).storeCatalogs, []);
      assertRejectedNaming({ SVC_STORE_CATALOGS: 'npm=https://x.example' }, 'SVC_STORE_CATALOGS');
    });
  });

  describe('port', () => {
    it('PORT wins over SVC_SERVER_PORT', () => {
      assert.equal(ok({ PORT: '3000', SVC_SERVER_PORT: '4000' }).port, 3000);
    });

    it('SVC_SERVER_PORT is used when PORT is unset', () => {
      assert.equal(ok({ SVC_SERVER_PORT: '4000' }).port, 4000);
    });

    it('an invalid PORT is reported as PORT even when SVC_SERVER_PORT is valid', () => {
      assertRejectedNaming({ PORT: 'abc', SVC_SERVER_PORT: '4000' }, 'PORT');
    });

    it('0 and 65535 are accepted, 65536 and negatives are not', () => {
      assert.equal(ok({ PORT: '0' }).port, 0);
      assert.equal(ok({ PORT: '65535' }).port, 65535);
      assertRejectedNaming({ PORT: '65536' }, 'PORT');
      assertRejectedNaming({ PORT: '-1' }, 'PORT');
      assertRejectedNaming({ SVC_SERVER_PORT: '8080.5' }, 'SVC_SERVER_PORT');
    });
  });

  describe('invalid values are each rejected with a message naming the variable', () => {
    const cases: Array<[string, Env]> = [
      ['PORT', { PORT: 'eighty' }],
      ['SVC_SERVER_PORT', { SVC_SERVER_PORT: '99999' }],
      ['SVC_REMOTE_PASSWORD', { SVC_REMOTE_PASSWORD: 'short' }],
      ['SVC_REMOTE_PASSWORD', { SVC_REMOTE_PASSWORD: 'has a space in it' }],
      ['SVC_REMOTE_PASSWORD', { SVC_REMOTE_PASSWORD: 'CHANGE-ME-8-to-64-chars' }],
      ['SVC_REMOTE_PASSWORD', { SVC_REMOTE_PASSWORD: 'my-change-me-pass' }],
      ['SVC_REMOTE_PASSWORD', { SVC_REMOTE_PASSWORD: 'choose-a-long-one' }],
      ['SVC_MIGRATIONS', { SVC_MIGRATIONS: 'later' }],
      ['SVC_METRICS_PUBLIC', { SVC_METRICS_PUBLIC: 'sure' }],
      ['SVC_ALLOW_MCP_COMMANDS', { SVC_ALLOW_MCP_COMMANDS: 'yes please' }],
      ['SVC_SCHEDULE_MIN_INTERVAL', { SVC_SCHEDULE_MIN_INTERVAL: '-1' }],
      ['SVC_SCHEDULE_MIN_INTERVAL', { SVC_SCHEDULE_MIN_INTERVAL: '1m' }],
      ['DATABASE_URL', { DATABASE_URL: 'mysql://db/app' }],
      ['DATABASE_URL', { DATABASE_URL: 'not a url' }],
      ['REDIS_URL', { REDIS_URL: 'http://cache:6379' }],
      ['SVC_REDIS_PREFIX', { SVC_REDIS_PREFIX: 'bad prefix!' }],
      ['SVC_REDIS_PREFIX', { SVC_REDIS_PREFIX: 'x'.repeat(65) }],
      ['SVC_AI_PROVIDER', { SVC_AI_PROVIDER: 'acme' }],
      ['SVC_AI_API_URL', { SVC_AI_API_URL: 'ftp://models.example' }],
      ['SVC_STORE_SOURCES', { SVC_STORE_SOURCES: 'https://ok.example, file:///etc' }],
      ['SVC_TRUST_PROXY', { SVC_TRUST_PROXY: 'maybe' }],
      ['SVC_BASE_PATH', { SVC_BASE_PATH: 'svc' }],
      ['SVC_BASE_PATH', { SVC_BASE_PATH: '/svc path' }],
      ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
      ['SVC_ROLE', { SVC_ROLE: 'scheduler' }],
      ['SVC_WS_PING_INTERVAL_MS', { SVC_WS_PING_INTERVAL_MS: '99' }],
      ['SVC_WS_PING_INTERVAL_MS', { SVC_WS_PING_INTERVAL_MS: 'soon' }],
      ['SVC_QUEUE_CONCURRENCY', { SVC_QUEUE_CONCURRENCY: '0' }],
      ['SVC_QUEUE_CONCURRENCY', { SVC_QUEUE_CONCURRENCY: '257' }],
      ['SVC_QUEUE_QUICK_CONCURRENCY', { SVC_QUEUE_QUICK_CONCURRENCY: '0' }],
      ['SVC_APP_RUNS_PER_PROCESS', { SVC_APP_RUNS_PER_PROCESS: '0' }],
      ['SVC_TEST_HOOKS', { SVC_TEST_HOOKS: 'on' }],
      ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
      ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }],
      ['SVC_SPACE_ROOTS', { SVC_SPACE_ROOTS: '/srv/projects, relative/dir' }],
      ['SVC_SPACE_ROOTS', { SVC_SPACE_ROOTS: '/' }],
      ['SVC_MCP_ALLOW', { SVC_MCP_ALLOW: '10.0.0.0/33' }],
      ['SVC_MCP_ALLOW', { SVC_MCP_ALLOW: 'http://mcp.internal' }],
      ['SVC_BROWSER_ALLOW', { SVC_BROWSER_ALLOW: '127.0.0.1/40' }],
      ['SVC_BROWSER_BLOCK', { SVC_BROWSER_BLOCK: 'https://evil.example' }],
      ['SVC_BROWSER_EXECUTABLE', { SVC_BROWSER_EXECUTABLE: 'chromium' }],
      ['SVC_BROWSER_WS_ENDPOINT', { SVC_BROWSER_WS_ENDPOINT: 'http://browser:3000' }],
      ['SVC_BROWSER_MAX_PAGES', { SVC_BROWSER_MAX_PAGES: '0' }],
      ['SVC_BROWSER_MAX_PAGES', { SVC_BROWSER_MAX_PAGES: 'many' }],
      ['SVC_BROWSER_DOWNLOAD_MAX_BYTES', { SVC_BROWSER_DOWNLOAD_MAX_BYTES: '0' }],
      ['SVC_FILE_IO', { SVC_FILE_IO: 'sync' }],
    ];
    for (const [variable, env] of cases) {
      it(`${variable}=${JSON.stringify(Object.values(env)[0])}`, () => assertRejectedNaming(env, variable));
    }
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT: unset means no tracing; an http(s) URL is kept as given', () => {
    assert.equal(ok({}).tracingEndpoint, null);
    assert.equal(
      ok({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' }).tracingEndpoint,
      'http://otel-collector:4318',
    );
  });

  it('several bad variables give ONE result listing ALL of them', () => {
    const env: Env = {
      PORT: 'x',
      SVC_REMOTE_PASSWORD: 'short',
      DATABASE_URL: 'mysql://x',
      REDIS_URL: 'nope',
      LOG_LEVEL: 'loud',
      SVC_ROLE: 'boss',
      SVC_TRUST_PROXY: 'perhaps',
      SVC_BASE_PATH: 'no-slash',
      SVC_QUEUE_CONCURRENCY: '1000',
    };
    const errs = errors(env);
    const named = errs.map((e) => e.slice(0, e.indexOf(':')));
    assert.deepEqual([...named].sort(), Object.keys(env).sort(), `errors: ${JSON.stringify(errs)}`);
  });

  describe('SVC_REMOTE_PASSWORD length', () => {
    it('7 characters are rejected', () =>
      assertRejectedNaming({ SVC_REMOTE_PASSWORD: 'a'.repeat(7) }, 'SVC_REMOTE_PASSWORD'));
    it('65 characters are rejected', () =>
      assertRejectedNaming({ SVC_REMOTE_PASSWORD: 'a'.repeat(65) }, 'SVC_REMOTE_PASSWORD'));
    it('8 characters are accepted', () => {
      assert.equal(ok({ SVC_REMOTE_PASSWORD: 'abcdefgh' }).password.fromEnv, 'abcdefgh');
    });
    it('64 characters are accepted', () => {
      const pw = 'Z'.repeat(64);
      assert.equal(ok({ SVC_REMOTE_PASSWORD: pw }).password.fromEnv, pw);
    });
  });

  describe('role', () => {
    it('SVC_ROLE=api without REDIS_URL is rejected', () => {
      const errs = errors({ SVC_ROLE: 'api' });
      assert.equal(errs.length, 1);
      assert.match(errs[0]!, /^SVC_ROLE:.*REDIS_URL/);
    });
    it('SVC_ROLE=worker without REDIS_URL is rejected', () => assertRejectedNaming({ SVC_ROLE: 'worker' }, 'SVC_ROLE'));
    it('SVC_ROLE=api with REDIS_URL is accepted (case-insensitive)', () => {
      const config = ok({ SVC_ROLE: 'API', REDIS_URL: 'redis://cache:6379' });
      assert.equal(config.role, 'api');
      assert.equal(config.redisUrl, 'redis://cache:6379');
    });
  });

  describe('base path', () => {
    it('a trailing slash is removed: /svc/ → /svc', () =>
      assert.equal(ok({ SVC_BASE_PATH: '/svc/' }).basePath, '/svc'));
    it('several trailing slashes are removed', () => assert.equal(ok({ SVC_BASE_PATH: '/a/b//' }).basePath, '/a/b'));
    it('/ alone means no prefix', () => assert.equal(ok({ SVC_BASE_PATH: '/' }).basePath, ''));
    it('a clean prefix is kept', () => assert.equal(ok({ SVC_BASE_PATH: '/svc-1/v2' }).basePath, '/svc-1/v2'));
  });

  describe('model seed', () => {
    it('is null when no SVC_AI_* variable is set', () => {
      assert.equal(ok({ REDIS_URL: 'redis://x:6379', SVC_TRUST_PROXY: '1' }).modelSeed, null);
    });

    for (const [name, value] of [
      ['SVC_AI_PROVIDER', 'openai'],
      ['SVC_AI_API_URL', 'https://api.example.com/v1'],
      ['SVC_AI_API_KEY', 'sk-test'],
      ['SVC_AI_MODEL', 'some-model'],
    ] as const) {
      it(`is present when only ${name} is set`, () => {
        const seed = ok({ [name]: value }).modelSeed;
        assert.ok(seed, 'expected a model seed');
        assert.equal(seed.provider, name === 'SVC_AI_PROVIDER' ? 'openai' : 'anthropic');
      });
    }

    it('carries every SVC_AI_* value', () => {
      const seed = ok({
        SVC_AI_PROVIDER: 'openai',
        SVC_AI_API_URL: 'https://api.example.com/v1',
        SVC_AI_API_KEY: 'sk-test',
        SVC_AI_MODEL: 'gpt-x',
      }).modelSeed;
      assert.deepEqual(seed, {
        provider: 'openai',
        apiUrl: 'https://api.example.com/v1',
        apiKey: 'sk-test',
        model: 'gpt-x',
      });
    });

    it('blank SVC_AI_* values do not create a seed', () => {
      assert.equal(ok({ SVC_AI_API_KEY: '', SVC_AI_MODEL: '  ' }).modelSeed, null);
    });
  });

  describe('other valid values', () => {
    it('are parsed', () => {
      const config = ok({
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgresql://u:p@db:5432/app',
        REDIS_URL: 'rediss://cache:6380',
        SVC_REDIS_PREFIX: 'tenant-1:svc',
        SVC_STORE_SOURCES: 'https://a.example, http://b.example ,',
        SVC_TRUST_PROXY: 'true',
        LOG_LEVEL: 'DEBUG',
        SVC_ROLE: 'worker',
        SVC_WS_PING_INTERVAL_MS: '100',
        SVC_QUEUE_CONCURRENCY: '256',
        SVC_QUEUE_QUICK_CONCURRENCY: '64',
        SVC_TEST_HOOKS: '1',
      });
      assert.equal(config.host, '127.0.0.1');
      assert.equal(config.databaseUrl, 'postgresql://u:p@db:5432/app');
      assert.equal(config.redisUrl, 'rediss://cache:6380');
      assert.equal(config.redisPrefix, 'tenant-1:svc');
      assert.deepEqual(config.storeSources, ['https://a.example', 'http://b.example']);
      assert.equal(config.trustProxy, true);
      assert.equal(config.logLevel, 'debug');
      assert.equal(config.role, 'worker');
      assert.equal(config.wsPingIntervalMs, 100);
      assert.equal(config.queueConcurrency, 256);
      assert.equal(config.queueQuickConcurrency, 64);
      assert.equal(config.testHooks, true);
    });
  });

  describe('secrets from files (SVC_REMOTE_PASSWORD_FILE, SVC_AI_API_KEY_FILE)', () => {
    const files: Record<string, string> = {
      '/run/secrets/password': '  Secret-Passw0rd\n',
      '/run/secrets/key': 'sk-test-123\n',
      '/run/secrets/empty': '\n',
    };
    const readFile = (path: string): string => {
      if (!(path in files)) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return files[path]!;
    };
    const withFiles = (env: Env): ConfigResult => parseConfig(env, { ...opts, readFile });

    it('reads each file once, trimmed, as if the variable were set', () => {
      const result = withFiles({
        SVC_REMOTE_PASSWORD_FILE: '/run/secrets/password',
        SVC_AI_API_KEY_FILE: '/run/secrets/key',
      });
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(result.config.password.fromEnv, 'Secret-Passw0rd');
      assert.equal(result.config.modelSeed?.apiKey, 'sk-test-123');
    });

    it('the file content is validated like the variable', () => {
      files['/run/secrets/short'] = 'short\n';
      const result = withFiles({ SVC_REMOTE_PASSWORD_FILE: '/run/secrets/short' });
      assert.ok(!result.ok);
      assert.match(result.errors[0]!, /^SVC_REMOTE_PASSWORD: must be 8 to 64/);
    });

    it('refuses both the variable and its file, an unreadable file and an empty one, never echoing content', () => {
      for (const [env, variable] of [
        [
          { SVC_REMOTE_PASSWORD: 'Another-Passw0rd', SVC_REMOTE_PASSWORD_FILE: '/run/secrets/password' },
          'SVC_REMOTE_PASSWORD_FILE',
        ],
        [{ SVC_AI_API_KEY: 'k', SVC_AI_API_KEY_FILE: '/run/secrets/key' }, 'SVC_AI_API_KEY_FILE'],
        [{ SVC_REMOTE_PASSWORD_FILE: '/run/secrets/nope' }, 'SVC_REMOTE_PASSWORD_FILE'],
        [{ SVC_AI_API_KEY_FILE: '/run/secrets/empty' }, 'SVC_AI_API_KEY_FILE'],
      ] as Array<[Env, string]>) {
        const result = withFiles(env);
        assert.ok(!result.ok, JSON.stringify(env));
        assert.equal(result.errors.length, 1, JSON.stringify(result.errors));
        assert.ok(result.errors[0]!.startsWith(`${variable}:`), result.errors[0]);
        assert.doesNotMatch(result.errors[0]!, /Secret-Passw0rd|sk-test-123/);
      }
      const unreadable = withFiles({ SVC_REMOTE_PASSWORD_FILE: '/run/secrets/nope' });
      assert.ok(!unreadable.ok && unreadable.errors[0]!.includes('(ENOENT)'));
    });
  });

  describe('security settings', () => {
    it('SVC_AGENT_BASH: 1 (default) sandboxed, 0 off, unsandboxed only when asked', () => {
      assert.equal(ok({}).agent.bash, 'sandboxed');
      assert.equal(ok({ SVC_AGENT_BASH: '1' }).agent.bash, 'sandboxed');
      assert.equal(ok({ SVC_AGENT_BASH: '0' }).agent.bash, 'off');
      assert.equal(ok({ SVC_AGENT_BASH: 'unsandboxed' }).agent.bash, 'unsandboxed');
      assertRejectedNaming({ SVC_AGENT_BASH: 'maybe' }, 'SVC_AGENT_BASH');
      assert.equal(ok({}).agent.bashNetwork, false);
      assert.equal(ok({ SVC_AGENT_BASH_NETWORK: '1' }).agent.bashNetwork, true);
    });

    it('SVC_TRUST_PROXY_HOPS: 1 by default, 1 to 10', () => {
      assert.equal(ok({}).trustProxyHops, 1);
      assert.equal(ok({ SVC_TRUST_PROXY: '1', SVC_TRUST_PROXY_HOPS: '2' }).trustProxyHops, 2);
      assertRejectedNaming({ SVC_TRUST_PROXY_HOPS: '0' }, 'SVC_TRUST_PROXY_HOPS');
      assertRejectedNaming({ SVC_TRUST_PROXY_HOPS: 'x' }, 'SVC_TRUST_PROXY_HOPS');
    });

    it('SVC_WS_SIGN_IN_TIMEOUT_MS: 10 s by default', () => {
      assert.equal(ok({}).wsSignInTimeoutMs, 10_000);
      assert.equal(ok({ SVC_WS_SIGN_IN_TIMEOUT_MS: '500' }).wsSignInTimeoutMs, 500);
      assertRejectedNaming({ SVC_WS_SIGN_IN_TIMEOUT_MS: '5' }, 'SVC_WS_SIGN_IN_TIMEOUT_MS');
    });
  });

  describe('space roots and the MCP allow-list', () => {
    it('unset: no space roots (null) and an empty allow-list', () => {
      const config = ok({});
      assert.equal(config.spaceRoots, null);
      assert.deepEqual(config.mcpAllow, []);
    });

    it('SVC_SPACE_ROOTS is a comma-separated list of absolute folders, resolved', () => {
      assert.deepEqual(ok({ SVC_SPACE_ROOTS: '/srv/projects/, /home/ann/work/../spaces' }).spaceRoots, [
        '/srv/projects',
        '/home/ann/spaces',
      ]);
    });

    it('SVC_MCP_ALLOW takes host names, *.domain, IP addresses and CIDR ranges', () => {
      assert.deepEqual(
        ok({ SVC_MCP_ALLOW: 'MCP.internal, *.corp.example, 127.0.0.1, 10.0.0.0/8, fd00::/8' }).mcpAllow,
        ['mcp.internal', '*.corp.example', '127.0.0.1', '10.0.0.0/8', 'fd00::/8'],
      );
    });
  });

  describe('the AI browser', () => {
    it('unset: a local /usr/bin/chromium, nothing allowed or blocked, 20 pages, 100 MB downloads, a 4 GB budget', () => {
      assert.deepEqual(ok({}).browser, {
        allow: [],
        block: [],
        executablePath: null,
        wsEndpoint: null,
        userAgent: null,
        maxPages: 20,
        downloadMaxBytes: 100 * 1024 * 1024,
        memoryBudgetMb: 4096,
      });
    });

    it('takes the allow and block lists, the executable, a remote endpoint, the user agent and the caps', () => {
      const browser = ok({
        SVC_BROWSER_ALLOW: '127.0.0.1, *.corp.example, 10.0.0.0/8',
        SVC_BROWSER_BLOCK: 'ads.example',
        SVC_BROWSER_EXECUTABLE: '/opt/chrome/chrome',
        SVC_BROWSER_WS_ENDPOINT: 'ws://browser:3000/pw',
        SVC_BROWSER_USER_AGENT: 'Mozilla/5.0 Test',
        SVC_BROWSER_MAX_PAGES: '5',
        SVC_BROWSER_DOWNLOAD_MAX_BYTES: '1048576',
        SVC_BROWSER_MEMORY_MB: '0',
      }).browser;
      assert.deepEqual(browser, {
        allow: ['127.0.0.1', '*.corp.example', '10.0.0.0/8'],
        block: ['ads.example'],
        executablePath: '/opt/chrome/chrome',
        wsEndpoint: 'ws://browser:3000/pw',
        userAgent: 'Mozilla/5.0 Test',
        maxPages: 5,
        downloadMaxBytes: 1048576,
        memoryBudgetMb: 0,
      });
    });
  });
});
