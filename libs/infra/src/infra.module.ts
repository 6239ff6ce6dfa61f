import { join } from 'node:path';
import { type DynamicModule, Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccessPassword } from '#core/auth/access.service.js';
import { Clock, SystemClock } from '#core/ports/clock.port.js';
import { ConnectionRegistry } from '#core/ports/connection-registry.port.js';
import { EventBus } from '#core/ports/event-bus.port.js';
import { EventLog } from '#core/ports/event-log.port.js';
import { JobQueue } from '#core/ports/job-queue.port.js';
import { LockoutStore } from '#core/ports/lockout-store.port.js';
import { ReadinessProbe } from '#core/ports/readiness.port.js';
import { StorageFaults } from '#core/ports/storage-faults.port.js';
import { PgStorageFaults } from './database/database-faults.js';
import { SettingsRepository } from '#core/ports/settings.repository.port.js';
import { SpaceActivity } from '#core/ports/space-activity.port.js';
import { TurnSpaceActivity } from '#core/agent/turn-reaper.js';
import { Metrics } from '#core/ports/metrics.port.js';
import { Backups } from '#core/ports/backup.port.js';
import { ModelProvider } from '#core/ports/model-provider.port.js';
import { ShellRunner } from '#core/ports/shell-runner.port.js';
import { TurnRepository } from '#core/ports/turn.repository.port.js';
import { WorkspaceSearch } from '#core/ports/workspace-search.port.js';
import { NodeShellRunner } from './agent/node-shell-runner.js';
import { NodeWorkspaceSearch } from './agent/node-workspace-search.js';
import { TypeormTurnRepository } from './agent/typeorm-turn.repository.js';
import { MeteredModelProvider } from './metrics/metered-model-provider.js';
import { PromMetrics } from './metrics/prom-metrics.js';
import { ProviderRouter } from './models/provider-router.js';
import { ConsolidationLock, ConsolidationStatus, MemoryFiles } from '#core/ports/memory-files.port.js';
import { SpaceFolders } from '#core/ports/space-folders.port.js';
import { SpaceRepository } from '#core/ports/space.repository.port.js';
import { APP_CONFIG } from '#core/config/app-config.js';
import { AppRepository } from '#core/ports/app.repository.port.js';
import { McpConnector } from '#core/ports/mcp-connector.port.js';
import { AssistantApi } from '#core/ports/assistant-api.port.js';
import { LoopbackAssistantApi } from './assistant-api/loopback-assistant-api.js';
import { SdkMcpConnector } from './mcp/sdk-mcp-connector.js';
import { AppScheduler } from '#core/ports/app-scheduler.port.js';
import { TriggerStore } from '#core/ports/trigger-store.port.js';
import { TriggerScheduler } from '#core/triggers/trigger-scheduler.js';
import { TypeormTriggerStore } from './triggers/typeorm-trigger.store.js';
import { TeamRepository } from '#core/ports/team.repository.port.js';
import { TypeormTeamRepository } from './teams/typeorm-team.repository.js';
import { DocumentParser, Embeddings, KnowledgeFiles, KnowledgeRepository } from '#core/knowledge/knowledge.ports.js';
import { BuiltInDocumentParser } from './knowledge/document-parsers.js';
import { OpenAICompatibleEmbeddings } from './knowledge/openai-embeddings.js';
import { DiskKnowledgeFiles } from './knowledge/disk-knowledge-files.js';
import { TypeormKnowledgeRepository } from './knowledge/typeorm-knowledge.repository.js';
import { ChannelRepository } from '#core/ports/channel.repository.port.js';
import { ChannelProviders } from '#core/channels/channel-provider.port.js';
import { TypeormChannelRepository } from './channels/typeorm-channel.repository.js';
import { BuiltinChannelProviders } from './channels/channel-providers.js';
import { TypeormAppRepository } from './apps/typeorm-app.repository.js';
import { CatalogFetcher } from '#core/ports/catalog-fetcher.port.js';
import { PackageFiles } from '#core/ports/package-files.port.js';
import { StoreRepository } from '#core/ports/store.repository.port.js';
import { HttpCatalogFetcher } from './store/http-catalog-fetcher.js';
import { TypeormStoreRepository } from './store/typeorm-store.repository.js';
import { ZipPackageFiles } from './store/zip-package-files.js';
import { ConversationRepository } from '#core/ports/conversation.repository.port.js';
import { FileStore } from '#core/ports/file-store.port.js';
import { TrashBin } from '#core/ports/trash-bin.port.js';
import { FileTreeScanner, FileWatcher } from '#core/ports/file-watcher.port.js';
import { LeaderLease } from '#core/ports/leader-lease.port.js';
import { Replica } from '#core/ports/replica.port.js';
import { TypeormConversationRepository } from './conversations/typeorm-conversation.repository.js';
import { NodeFileStore } from './files/node-file-store.js';
import { fileIoChooser } from './files/file-io.js';
import { NodeTrashBin } from './files/node-trash-bin.js';
import type { Infrastructure } from './infrastructure.js';
import { BrowserProfiles } from '#core/browser/ai-browser.js';
import { TypeormBrowserProfiles } from './browser/typeorm-browser-profiles.js';
import { LivePageRegistry } from '#core/browser/live-page-registry.js';
import { LocalLivePageRegistry, RedisLivePageRegistry } from './browser/live-page-registries.js';
import { resolveSecretsKey } from './config/load-config.js';
import { ChokidarFileWatcher } from './watch/chokidar-file-watcher.js';
import { LocalLeaderLease } from './watch/local-leader-lease.js';
import { NodeFileTreeScanner } from './watch/node-file-tree-scanner.js';
import { RedisLeaderLease } from './watch/redis-leader-lease.js';
import { AppLogger, registerSecret } from './logging/logger.js';
import { LocalConsolidationLock, RedisConsolidationLock } from './memory/consolidation-locks.js';
import { NodeMemoryFiles } from './memory/node-memory-files.js';
import { NodeSpaceFolders } from './spaces/node-space-folders.js';
import { CachedSpaceRepository } from './spaces/cached-space.repository.js';
import { TypeormSpaceRepository } from './spaces/typeorm-space.repository.js';
import { BrowserEngine } from '#core/browser/browser-engine.port.js';
import { PlaywrightBrowserEngine } from './browser/playwright-browser-engine.js';

/**
 * Binds every port to its adapter: the only binder, and (through the started Infrastructure and
 * its Replica) the only reader of the deployment mode. Context modules bind core services only.
 */
@Global()
@Module({})
export class InfraModule {
  static forRoot(infra: Infrastructure, password: string, logger: AppLogger): DynamicModule {
    const { config, replica } = infra;
    const turns = new TypeormTurnRepository(infra.dataSource);
    const providers = [
      { provide: APP_CONFIG, useValue: config },
      { provide: Replica, useValue: replica },
      { provide: AppLogger, useValue: logger },
      { provide: AccessPassword, useValue: new AccessPassword(password) },
      { provide: Clock, useClass: SystemClock },
      { provide: EventBus, useValue: infra.eventBus },
      { provide: EventLog, useValue: infra.eventLog },
      { provide: JobQueue, useValue: infra.jobQueue },
      { provide: LockoutStore, useValue: infra.lockoutStore },
      { provide: ConnectionRegistry, useValue: infra.connectionRegistry },
      { provide: SettingsRepository, useValue: infra.settings },
      { provide: ReadinessProbe, useValue: infra.readiness },
      { provide: StorageFaults, useClass: PgStorageFaults },
      // Context modules bind their TypeORM repositories from this.
      { provide: DataSource, useValue: infra.dataSource },
      // Embedded mode is one process (the data folder lock): the only writer, so it may keep spaces in memory.
      { provide: SpaceRepository, useValue: spaceRepository(infra) },
      { provide: SpaceFolders, useClass: NodeSpaceFolders },
      // The file API, the file watcher and the agent's tools share one FileStore and its path
      // guard; the trash lives in the data folder.
      {
        provide: FileStore,
        useFactory: (clock: Clock) =>
          new NodeFileStore({
            trashDir: join(config.dataDir, 'trash'),
            now: () => new Date(clock.now()),
            fileIo: fileIoChooser(config.fileIo),
          }),
        inject: [Clock],
      },
      // What FileStore.trash fills, read back (a space's trash: list, restore, delete for good).
      { provide: TrashBin, useFactory: () => new NodeTrashBin({ trashDir: join(config.dataDir, 'trash') }) },
      { provide: FileWatcher, useFactory: () => new ChokidarFileWatcher({ usePolling: config.fileWatchPolling }) },
      { provide: FileTreeScanner, useFactory: () => new NodeFileTreeScanner() },
      // The file watcher's leadership: in Redis beside other replicas; alone, this process always leads.
      {
        provide: LeaderLease,
        useFactory: () =>
          replica.shared && config.redisUrl !== null
            ? new RedisLeaderLease(config.redisUrl, config.redisPrefix, replica.id, logger)
            : new LocalLeaderLease(),
      },
      { provide: ConversationRepository, useValue: new TypeormConversationRepository(infra.dataSource) },
      { provide: TurnRepository, useValue: turns },
      { provide: SpaceActivity, useValue: new TurnSpaceActivity(turns) },
      { provide: Metrics, useValue: infra.metrics },
      { provide: Backups, useValue: infra.backups },
      // The concrete registry, for the /metrics endpoint.
      { provide: PromMetrics, useValue: infra.metrics },
      { provide: ModelProvider, useValue: new MeteredModelProvider(new ProviderRouter(), infra.metrics, logger) },
      {
        provide: ShellRunner,
        // Tries the sandbox once at start: Bash is offered only where it works (or when unsandboxed is chosen).
        useFactory: () => NodeShellRunner.create(config.agent, logger),
      },
      { provide: WorkspaceSearch, useClass: NodeWorkspaceSearch },
      { provide: MemoryFiles, useClass: NodeMemoryFiles },
      {
        provide: ConsolidationLock,
        useValue: infra.redisClient
          ? new RedisConsolidationLock(infra.redisClient, config.redisPrefix)
          : new LocalConsolidationLock(),
      },
      { provide: ConsolidationStatus, useExisting: ConsolidationLock },
      { provide: AppRepository, useValue: new TypeormAppRepository(infra.dataSource) },
      { provide: McpConnector, useClass: SdkMcpConnector },
      // Connected by the server once the assistant's listener is up.
      { provide: AssistantApi, useValue: new LoopbackAssistantApi() },
      { provide: CatalogFetcher, useValue: new HttpCatalogFetcher() },
      { provide: StoreRepository, useValue: new TypeormStoreRepository(infra.dataSource) },
      { provide: PackageFiles, useClass: ZipPackageFiles },
      // Schedules as data in Postgres, fired through delayed jobs (docs/api/triggers.md, "Schedules").
      { provide: TriggerStore, useValue: new TypeormTriggerStore(infra.dataSource) },
      { provide: TriggerScheduler, useClass: TriggerScheduler },
      { provide: AppScheduler, useExisting: TriggerScheduler },
      { provide: TeamRepository, useValue: new TypeormTeamRepository(infra.dataSource) },
      // Knowledge bases (docs/api/knowledge.md): records and chunk index in Postgres, source files in the data folder.
      {
        provide: KnowledgeRepository,
        // Embedded: no autovacuum, so a batch's end analyses the chunk table when it changed (markIngested).
        useValue: new TypeormKnowledgeRepository(
          infra.dataSource,
          config.kbVectorCacheMb * 1024 * 1024,
          infra.replica.mode === 'embedded',
        ),
      },
      { provide: KnowledgeFiles, useValue: new DiskKnowledgeFiles(config.dataDir) },
      { provide: DocumentParser, useClass: BuiltInDocumentParser },
      { provide: Embeddings, useClass: OpenAICompatibleEmbeddings },
      { provide: ChannelRepository, useValue: new TypeormChannelRepository(infra.dataSource) },
      {
        provide: ChannelProviders,
        useFactory: () => new BuiltinChannelProviders(config.channels ?? { allow: [], publicUrl: null }),
      },
      // Cookie jars of the AI browser, encrypted at rest (docs/api/ai-browser.md, "Profiles and sign-in").
      {
        provide: BrowserProfiles,
        useFactory: () => {
          const key = resolveSecretsKey(config).value;
          // The key never reaches a log line, not even by accident (redacted like the password).
          registerSecret(key);
          return new TypeormBrowserProfiles(infra.dataSource, key);
        },
      },
      // Which replica holds which AI browser page: in Redis beside other replicas; alone, this process's own.
      {
        provide: LivePageRegistry,
        useValue: infra.redisClient
          ? new RedisLivePageRegistry(infra.redisClient, config.redisPrefix)
          : new LocalLivePageRegistry(),
      },
      // Chromium starts on the first page, not here.
      {
        provide: BrowserEngine,
        useFactory: (profiles: BrowserProfiles) => new PlaywrightBrowserEngine(config.browser, profiles, logger),
        inject: [BrowserProfiles],
      },
    ];
    return { module: InfraModule, providers, exports: providers.map((p) => p.provide) };
  }
}

/** Spaces from the database; kept in memory where this process is the database's only writer (embedded). */
function spaceRepository(infra: Infrastructure): SpaceRepository {
  const stored = new TypeormSpaceRepository(infra.dataSource, infra.config.dataDir);
  return infra.replica.mode === 'embedded' ? new CachedSpaceRepository(stored) : stored;
}
