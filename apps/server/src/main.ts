import 'reflect-metadata';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { Response as ExpressResponse } from 'express';
import type { AppConfig } from '#core/config/app-config.js';
import { ConfigError, loadConfig, resolveAccessPassword } from '#infra/config/load-config.js';
import { startEmbeddedDatabase } from '#infra/database/embedded-start.js';
import { deploymentOf } from '#infra/deployment.js';
import { describeError } from '#infra/logging/describe-error.js';
import { AppLogger, createPino, registerSecret } from '#infra/logging/logger.js';
import { NodeShellRunner } from '#infra/agent/node-shell-runner.js';
import { relayTrace } from '#core/kernel/relay-trace.js';
import type { AssistantListener } from './http/assistant-api/assistant-listener.js';

/** SIGTERM must end the process within 10 s (docs/operations.md, "Start and stop"); keep a margin. */
const SHUTDOWN_DEADLINE_MS = 9_000;
/** How long an idle keep-alive connection is kept (see where it is set). */
const KEEP_ALIVE_IDLE_MS = 65_000;

/** `main.js --help`: the commands and the main variables (README, "Configuration", has them all). */
const USAGE = `Usage: node dist/server/main.js [command] [argument]

Commands:
  serve                   start the server (the default)
  migrate                 apply the database migrations and exit
  migrate-to-postgres     copy the embedded database into DATABASE_URL and exit
  backup [folder]         write a backup of the database and the data folder
  restore <folder>        restore a backup into SVC_DATA_DIR
  --help, -h              show this text

Main variables (all of them: README.md, "Configuration"):
  PORT (or SVC_SERVER_PORT)   listening port, default 8080
  HOST                        listening address, default 0.0.0.0
  SVC_REMOTE_PASSWORD         access password, 8 to 64 characters (generated and kept when unset)
  SVC_DATA_DIR                the data folder, default ./data (/data in the container)
  DATABASE_URL                postgres://... (unset: an embedded database in the data folder)
  REDIS_URL                   redis://... for several replicas (unset: one process per data folder)
  SVC_ROLE                    all, api or worker, default all
  SVC_MIGRATIONS              skip: do not migrate at start (run \`migrate\` first)
  SVC_AI_PROVIDER, SVC_AI_API_URL, SVC_AI_API_KEY, SVC_AI_MODEL
                              a model source added at start and made current
  SVC_BASE_PATH               a path prefix the server serves under (proxies that keep it)
  SVC_TRUST_PROXY             1: the client address from X-Forwarded-For
  LOG_LEVEL                   error, warn, info (default) or debug
`;

/** Node 22.8 and later (the image's) can keep V8's compiled code between starts; Node 20 cannot. */
const compileCache = nodeModule as typeof nodeModule & { enableCompileCache?: () => unknown };

async function bootstrap(): Promise<void> {
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h' || a === 'help')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  // Before the server's modules are imported: a later start on this machine takes their compiled
  // code from the cache (in the system's temporary folder; the image sets NODE_COMPILE_CACHE, which
  // covers the database thread too; docs/performance.md, "Start-up").
  compileCache.enableCompileCache?.();
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc-server cannot start. ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  registerSecret(config.password.fromEnv);
  registerSecret(config.modelSeed?.apiKey);
  const logger = new AppLogger(createPino(config.logLevel));
  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { err: describeError(reason) }));

  // Subcommands (each exits): migrate, wait-for-migrations, migrate-to-postgres, backup [folder], restore <folder> [--force].
  const args = process.argv.slice(2);
  const command = args[0];
  const force = args.includes('--force');
  const argument = args.slice(1).find((a) => !a.startsWith('--'));
  if (command !== undefined && command !== 'serve') {
    const { CommandError, runBackupCommand, runRestoreCommand } = await import('#infra/backup/backup-commands.js');
    const { runMigrateCommand, runWaitForMigrations } = await import('#infra/database/migrate-command.js');
    const { runMoveToPostgres } = await import('#infra/database/move-to-postgres.js');
    try {
      if (command === 'migrate') await runMigrateCommand(config, logger);
      else if (command === 'wait-for-migrations') await runWaitForMigrations(config, logger);
      else if (command === 'migrate-to-postgres') await runMoveToPostgres(config, logger);
      else if (command === 'backup') {
        await runBackupCommand(config, resolveAccessPassword(config).value, argument, logger);
      } else if (command === 'restore') await runRestoreCommand(config, argument, logger, force);
      else {
        throw new CommandError(
          `unknown command "${command}" (expected serve, migrate, wait-for-migrations, migrate-to-postgres, backup or restore)`,
        );
      }
    } catch (err) {
      process.stderr.write(`svc-server ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof CommandError ? 2 : 1);
    }
    process.exit(0);
  }

  // The embedded database opens on its own thread while the rest of the server loads (each
  // takes seconds); the data folder lock is taken first, so a second process stops here.
  const embedded = deploymentOf(config).mode === 'embedded' ? startEmbeddedDatabase(config, logger) : undefined;
  // So is the Bash tool's sandbox tried (a child process, ~0.1 s), rather than while Nest creates the server.
  NodeShellRunner.beginProbe(config.agent);
  const {
    NestFactory,
    AccessService,
    Infrastructure,
    AssistantApi,
    LoopbackAssistantApi,
    AppModule,
    markRelayed,
    startAssistantListener,
    authMiddleware,
    installBasePath,
    routeBrowserViews,
    warnOnUnknownPrefix,
    corsHeaders,
    jsonBody,
    ServerHttpAdapter,
    inOneLayer,
    underPath,
    requestLogging,
    httpMetrics,
    docsPage,
    DOCS_PATH,
    TurnRunner,
    JobProcessors,
    ArtifactWatchService,
    createFrameAdapter,
    EventsGateway,
    SystemService,
    PromMetrics,
    workerProbes,
    configureApiApp,
    startAssistantRelay,
  } = await import('./server-modules.js');

  const password = resolveAccessPassword(config);
  registerSecret(password.value);
  if (password.source === 'generated') {
    // Printed once, on the console only (never through the log pipeline).
    process.stderr.write(
      `\n  Access password (generated): ${password.value}\n` +
        `  Kept in ${password.file}. Set SVC_REMOTE_PASSWORD to choose your own.\n\n`,
    );
  } else if (password.source === 'stored') {
    logger.info('access password loaded from the data folder', {
      file: password.file,
      hint: 'set SVC_REMOTE_PASSWORD to choose your own',
    });
  }

  const traceFile = config.relayTraceFile;
  if (traceFile) {
    // bench/agent only: per-stage timestamps of every event, written when the process exits;
    // where the bench lists conversations in <file>.conversations (read at a conversation's
    // first event), only those.
    relayTrace.enabled = true;
    const selected = `${traceFile}.conversations`;
    relayTrace.selects = (conversationId) =>
      !existsSync(selected) || readFileSync(selected, 'utf8').split('\n').includes(conversationId);
    process.once('exit', () => writeFileSync(traceFile, JSON.stringify(relayTrace.dump())));
  }

  const infra = await Infrastructure.start(config, logger, embedded);
  const workerOnly = config.role === 'worker';
  const httpAdapter = new ServerHttpAdapter();
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forConfig(config, infra, password.value, logger),
    httpAdapter,
    { logger, bodyParser: false, abortOnError: false },
  );
  const server = app.getHttpServer() as Server;
  // A client or proxy reusing an idle keep-alive connection at the moment the server drops it gets
  // a reset instead of an answer (Node drops them after 5 s idle, shorter than most clients and
  // proxies wait): kept open longer, so the other side is the one that closes. Idle connections
  // still close at once on shutdown.
  server.keepAliveTimeout = KEEP_ALIVE_IDLE_MS;
  server.headersTimeout = KEEP_ALIVE_IDLE_MS + 1_000;
  // Prepended listeners run newest first: the prefix check sees URLs after the base path is stripped.
  warnOnUnknownPrefix(server, config.basePath, (message, fields) => logger.warn(message, fields));
  routeBrowserViews(server);
  installBasePath(server, config.basePath);
  configureApiApp(app, logger, config.basePath);
  // The application whose routes the assistant's listener reaches: this one, or in a worker-only
  // process (no controllers of its own) its assistant relay on 127.0.0.1 (see startAssistantRelay).
  let apiApp: INestApplication = app;
  // The assistant listener's token, once it listens: requests carrying it came through it.
  let relayToken: string | null = null;
  // The OpenAPI document (what /api/openapi.json answers and the assistant listener reads its
  // operations from): built once, after the server listens (it and its modules, @nestjs/swagger's
  // scanner and class-validator-jsonschema, cost ~0.3 s), or sooner when something asks for it.
  let openApi: Promise<{ doc: OpenAPIObject; json: string }> | null = null;
  const openApiDocument = (): Promise<{ doc: OpenAPIObject; json: string }> =>
    (openApi ??= import('./http/openapi/openapi-document.js').then(({ buildOpenApiDocument }) => {
      const doc = buildOpenApiDocument(apiApp, config.version, config.basePath);
      return { doc, json: JSON.stringify(doc) };
    }));
  const openApiJson = (req: { method: string }, res: ExpressResponse, next: (err?: unknown) => void): void => {
    if (req.method !== 'GET') return next();
    openApiDocument().then(({ json }) => res.status(200).type('application/json').send(json), next);
  };
  // What every request goes through, in this order, as ONE layer run ahead of Express (see
  // handleFirst, inOneLayer and underPath): its log line and id, metrics and log context, CORS,
  // the JSON body; the public docs page; every /api request's token check; whether the
  // assistant's listener passed it on (some arguments are the password holder's only); the
  // OpenAPI document; the controllers' routes. Nest's not-found and error handlers, in Express,
  // take what it passes on. A worker-only process, which has no controllers, answers its probes
  // and metrics and nothing else.
  httpAdapter.handleFirst(
    inOneLayer(
      requestLogging(logger, config),
      httpMetrics(infra.metrics),
      corsHeaders(),
      ...(workerOnly
        ? [
            workerProbes({
              system: app.get(SystemService),
              metrics: app.get(PromMetrics),
              access: app.get(AccessService),
              config,
            }),
          ]
        : [
            jsonBody(),
            underPath(DOCS_PATH, docsPage()),
            underPath('/api', authMiddleware(app.get(AccessService))),
            markRelayed(() => relayToken),
            underPath('/api/openapi.json', openApiJson),
            httpAdapter.routesInLayer(),
          ]),
    ),
  );
  if (!workerOnly) app.useWebSocketAdapter(createFrameAdapter(app));
  // No app.enableShutdownHooks(): signals are handled below; app.close() still runs the hooks.

  await app.init();
  // Consuming (the queue's workers, repeatable jobs: round trips to the job store) starts while the
  // server binds and the assistant listener builds its operations; "listening" is logged once all
  // of them are done, and a failure still ends the start. (The first schedule reconcile, begun
  // with it, goes on in the background.)
  const consuming = config.role !== 'api' ? app.get(JobProcessors).startConsuming() : Promise.resolve();
  consuming.catch(() => undefined); // awaited below
  await app.listen(config.port, config.host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // The assistant's own way into the API (svc-api-ref): 127.0.0.1, its own token, Assistant operations
  // only. In every role that runs turns: a worker-only process, which has no routes of its own,
  // passes its calls on to its assistant relay (see startAssistantRelay).
  let assistantListener: AssistantListener | null = null;
  let relayApp: NestExpressApplication | null = null;
  const assistantApi = app.get(AssistantApi);
  if (assistantApi instanceof LoopbackAssistantApi) {
    let target: string;
    if (workerOnly) {
      const relay = await startAssistantRelay(app, config, logger, () => relayToken);
      target = relay.url;
      relayApp = relay.app;
      apiApp = relay.app;
    } else {
      const host = ['0.0.0.0', '::', '', 'localhost'].includes(config.host) ? '127.0.0.1' : config.host;
      target = `http://${host.includes(':') ? `[${host}]` : host}:${port}${config.basePath}`;
    }
    const listener = await startAssistantListener({
      doc: () => openApiDocument().then(({ doc }) => doc),
      target,
      password: password.value,
    });
    assistantListener = listener;
    relayToken = listener.token;
    assistantApi.connect(listener.url, listener.token, () =>
      listener.operations().then((ops) => ops.map((o) => `${o.method} ${o.template}`)),
    );
    logger.debug('assistant API listening', { url: listener.url });
  }

  // And the first watches of the spaces, which open beside the rest of the start (the watch's hook
  // returns at once): changes made on disk once "listening" is logged are seen.
  await Promise.all([consuming, app.get(ArtifactWatchService).startedWatching()]);
  logger.info(listeningLine(config, port, workerOnly), {
    port,
    host: config.host,
    role: config.role,
    mode: infra.mode,
    queue: infra.deployment.redis ? 'redis' : 'postgres',
    basePath: config.basePath || undefined,
    version: config.version,
  });
  // Now, while nothing waits for it, rather than in the first request or turn that needs it.
  infra
    .warmDatabase()
    .catch((err: unknown) => logger.debug('database connections not warmed', { err: describeError(err) }));
  if (!workerOnly || assistantListener) {
    setImmediate(() => {
      openApiDocument().catch((err: unknown) => logger.error('OpenAPI document failed', { err: describeError(err) }));
      assistantListener?.operations().then(
        (operations) => logger.info('assistant API operations', { operations: operations.length }),
        () => undefined,
      );
    });
  }

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const deadline = setTimeout(() => {
      logger.warn('shutdown deadline reached; exiting');
      process.exit(0);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    try {
      // Stop accepting; end running turns while their sockets can still hear it; tell socket
      // clients to reconnect elsewhere; then drain jobs, flush and disconnect.
      server.close();
      void assistantListener?.close();
      await app.get(TurnRunner).interruptAll(3_000);
      if (!workerOnly) app.get(EventsGateway).closeAll();
      server.closeIdleConnections?.();
      await relayApp?.close();
      await app.close();
      await infra.stop();
      logger.info('stopped');
    } catch (err) {
      logger.error('shutdown failed', { err: (err as Error).message });
    }
    clearTimeout(deadline);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * The start-up line that says where to go (docs/operations.md, "Start and stop"): the address a
 * browser on this machine opens (a wildcard host shows as localhost), with the base path.
 */
function listeningLine(config: AppConfig, port: number, workerOnly: boolean): string {
  const wildcard = ['0.0.0.0', '::', ''].includes(config.host);
  const host = wildcard ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}${config.basePath}/`;
  return workerOnly
    ? `svc-server listening on ${url} (worker: probes and metrics only)`
    : `svc-server listening on ${url} (web app and API)`;
}

bootstrap().catch((err: unknown) => {
  process.stderr.write(`svc-server failed to start: ${describeError(err)}\n`);
  // A fault in the code rather than in the configuration or the machine (e.g. the rare "X is not
  // a function" of a package's export at start under load, docs/performance.md): where it was
  // thrown, so that the report can say.
  if (err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError)
    process.stderr.write(`${err.stack ?? ''}\n`);
  process.exit(1);
});
