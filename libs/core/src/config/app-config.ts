/** The validated configuration (README.md, "Configuration"), parsed once at start. */

export type ServerRole = 'all' | 'api' | 'worker';
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type ModelProviderKind = 'anthropic' | 'openai';

export interface ModelSourceSeed {
  provider: ModelProviderKind;
  apiUrl?: string;
  apiKey?: string;
  model?: string;
}

export interface AppConfig {
  port: number;
  host: string;
  /** Absolute path of the data folder. */
  dataDir: string;
  /** The access password source; the value itself is resolved by infra. */
  password: { fromEnv: string | null };
  databaseUrl: string | null;
  redisUrl: string | null;
  /** Key prefix for everything this deployment keeps in Redis. */
  redisPrefix: string;
  modelSeed: ModelSourceSeed | null;
  storeSources: string[];
  /**
   * The built-in public catalogs (SVC_STORE_CATALOGS), read by their adapters. Unset: the four
   * public addresses, off until turned on; set: exactly the ones listed, on.
   */
  storeCatalogs: StoreCatalogSeed[];
  trustProxy: boolean;
  /** Proxies in front of the server that each append to X-Forwarded-For (SVC_TRUST_PROXY_HOPS). */
  trustProxyHops: number;
  /** '' or a prefix like '/svc' (no trailing slash). */
  basePath: string;
  logLevel: LogLevel;
  role: ServerRole;
  /** WebSocket protocol ping interval; the spec fixes 15 s. */
  wsPingIntervalMs: number;
  /** A socket that has not signed in after this long is closed. */
  wsSignInTimeoutMs: number;
  /** Parallel jobs per worker process. */
  queueConcurrency: number;
  /** Parallel short jobs (ticks, deliveries, channel messages, replies) per worker process, in their own lane. */
  queueQuickConcurrency: number;
  /** SVC_APP_RUNS_PER_PROCESS: digital-human runs a worker process works on at once (the others wait). */
  appRunsPerProcess: number;
  /** SVC_TEAM_MAX_MESSAGES, SVC_TEAM_MAX_DEPTH, SVC_TEAM_MAX_RUN_MS: a team run's limits (docs/api/teams.md). */
  teamLimits: { maxMessages: number; maxForwardDepth: number; maxDurationMs: number };
  version: string;
  agent: AgentSettings;
  /** SVC_FILE_WATCH_POLLING=1: poll the disk instead of native events (network volumes). */
  fileWatchPolling: boolean;
  /**
   * SVC_FILE_IO: where the path guard's calls and small files' reads by path run. `auto`: on the
   * event loop for folders on a local file system, in libuv's thread pool elsewhere; `pool`: in the
   * pool everywhere; `direct`: on the event loop everywhere.
   */
  fileIo: FileIoMode;
  /** SVC_SEARCH_INDEX_LIMIT: most paths the file search index holds per space. */
  searchIndexLimit: number;
  /** SVC_TRIGGER_RECONCILE_MS: how often schedules' delayed jobs are rebuilt from Postgres (a job store restarted empty). */
  triggerReconcileMs: number;
  /** SVC_SCHEDULE_MIN_INTERVAL (seconds, default 60; 0 turns the floor off): the least time between two runs of one schedule. */
  scheduleMinIntervalMs: number;
  /** SVC_TRIGGER_CLAIM_LEASE_MS: a claimed schedule occurrence whose run has not started after this long is taken over. */
  triggerClaimLeaseMs: number;
  /** SVC_WEBHOOK_QUEUE_MAX (default 100): deliveries that may wait per app; past it a delivery is answered 429. */
  webhookQueueMax: number;
  /** SVC_TRIGGER_BACKOFF_MS: pause before the next scheduled run after 1, 2, … failed runs in a row (last value repeats). */
  triggerBackoffMs: number[];
  /** SVC_TRIGGER_PAUSE_AFTER: this many failed runs in a row pause a digital human with `lastError`. */
  triggerPauseAfter: number;
  /** SVC_MIGRATIONS: `run` (default) applies pending migrations at start under a lock; `skip` leaves them to a migrations job. */
  migrations: 'run' | 'skip';
  /** SVC_METRICS_PUBLIC=1: /metrics answers without the access password. */
  metricsPublic: boolean;
  /**
   * SVC_ALLOW_MCP_COMMANDS=1: remote requests may install MCP servers that run a command on
   * this host (stdio); otherwise they answer 403 MCP_COMMAND_BLOCKED. HTTP servers are always allowed.
   */
  allowMcpCommands: boolean;
  /**
   * SVC_SPACE_ROOTS: the folders (absolute, resolved) a space's `customPath` or `working-dir`
   * must lie in. null (unset): the password holder may use any folder outside the data
   * folder and the system folders, and calls relayed by the assistant's listener may use
   * none (their spaces live under the data folder).
   */
  spaceRoots: string[] | null;
  /**
   * SVC_MCP_ALLOW: hosts, `*.domain`s, IPs and CIDR ranges that an MCP server given inline to
   * `test-mcp` may reach although loopback, private or link-local (see host-allow-list.ts).
   */
  mcpAllow: string[];
  /** The AI browser's engine and navigation policy (docs/api/ai-browser.md, "Policy"). */
  browser: BrowserSettings;
  /** Message channels (docs/api/channels.md); absent: the defaults (nothing private allowed, no public URL). */
  channels?: ChannelSettings;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces go to this OTLP/HTTP collector; null: no tracing (nothing loaded). */
  tracingEndpoint: string | null;
  /** SVC_TEST_HOOKS=1: test-only operations (publishing raw events). Never in production. */
  testHooks: boolean;
  /** SVC_RELAY_TRACE: bench/agent only; the file the per-stage timestamps of every event go to at exit. */
  relayTraceFile: string | null;
  /**
   * SVC_SECRETS_KEY: the secret that encrypts data at rest (browser profiles); null when unset,
   * then infra generates one into the data folder (`resolveSecretsKey`).
   */
  secretsKey: string | null;
  /**
   * SVC_KB_IMPORT_ROOTS: server folders (absolute, resolved) whose files `POST /api/tlon/:kbId/files`
   * may copy into a knowledge base by absolute path; empty (unset): only files inside workspaces.
   */
  kbImportRoots: string[];
  /**
   * SVC_KB_VECTOR_CACHE_MB: memory for the in-process vector index of knowledge bases (default 512;
   * 0: none, every semantic search scans in SQL); a base whose vectors exceed it is scanned in SQL.
   */
  kbVectorCacheMb: number;
}

/**
 * SVC_AGENT_BASH: `off` removes the Bash tool; `sandboxed` offers it only where the sandbox
 * works; `unsandboxed` offers it even where no sandbox works (the operator's explicit choice).
 */
export type BashMode = 'off' | 'sandboxed' | 'unsandboxed';

/** SVC_FILE_IO (AppConfig.fileIo). */
export type FileIoMode = 'auto' | 'direct' | 'pool';

export interface AgentSettings {
  bash: BashMode;
  /** SVC_AGENT_BASH_NETWORK: whether sandboxed commands keep the host's network. */
  bashNetwork: boolean;
  /** SVC_AGENT_BWRAP: the bubblewrap program (tests name a missing one to see Bash turn off). */
  bwrapPath: string;
  bashTimeoutMs: number;
  /** Model calls per turn before it stops with the step-limit error. */
  maxSteps: number;
  /** Retries of a failed model call (429, 5xx, network), and the first backoff. */
  maxRetries: number;
  retryBaseMs: number;
  maxOutputTokens: number;
}

export interface ChannelSettings {
  /**
   * SVC_CHANNEL_ALLOW: loopback/private hosts, `*.domain`s, IPs and CIDRs a channel may call
   * anyway (a webhook instance's callback URL, a platform API root), as SVC_BROWSER_ALLOW.
   */
  allow: string[];
  /** SVC_PUBLIC_URL: the server's public address; platforms that push (Telegram webhooks) are told to call it. */
  publicUrl: string | null;
}

export interface BrowserSettings {
  /** SVC_BROWSER_ALLOW: loopback/private hosts, `*.domain`s, IPs and CIDRs the AI browser may open anyway. */
  allow: string[];
  /** SVC_BROWSER_BLOCK: hosts, `*.domain`s, IPs and CIDRs the AI browser never opens. */
  block: string[];
  /** SVC_BROWSER_EXECUTABLE: the Chromium to launch; null: /usr/bin/chromium. */
  executablePath: string | null;
  /** SVC_BROWSER_WS_ENDPOINT: a remote Playwright browser server (`ws://…`) instead of a local Chromium. */
  wsEndpoint: string | null;
  /** SVC_BROWSER_USER_AGENT: overrides the user agent derived from the Chromium's version. */
  userAgent: string | null;
  /** SVC_BROWSER_MAX_PAGES: pages open at once in this process (default 20). */
  maxPages: number;
  /** SVC_BROWSER_DOWNLOAD_MAX_BYTES: the largest file a download may save (default 100 MB). */
  downloadMaxBytes: number;
  /**
   * SVC_BROWSER_MEMORY_MB: the resident memory this process's Chromium may use before a new page
   * first closes idle ones, then is refused (default 4096; 0: no budget). A remote browser's
   * memory is its own host's concern.
   */
  memoryBudgetMb?: number;
}

export const DEFAULT_STORE_SOURCE = 'https://openkursar.github.io/digital-human-protocol';

/** Protocols of the built-in public catalogs (docs/api/store-and-packages.md, "Sources and catalogs"). */
export const PUBLIC_CATALOG_PROTOCOLS = ['mcp-registry', 'smithery', 'claude-skills', 'skillhub'] as const;
export type PublicCatalogProtocol = (typeof PUBLIC_CATALOG_PROTOCOLS)[number];

export interface StoreCatalogSeed {
  protocol: PublicCatalogProtocol;
  url: string;
  enabled: boolean;
}

/** Where the public catalogs live (their public addresses; docs/api/store-and-packages.md). */
export const DEFAULT_STORE_CATALOGS: Record<PublicCatalogProtocol, string> = {
  'mcp-registry': 'https://registry.modelcontextprotocol.io',
  smithery: 'https://registry.smithery.ai',
  'claude-skills': 'https://majiayu000.github.io/claude-skill-registry-core',
  skillhub: 'https://api.skillhub.cn',
};
export const DEFAULT_PORT = 8080;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 64;

/** Injection token of the validated AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
