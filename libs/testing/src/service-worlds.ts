import assert from 'node:assert/strict';
import type { AppConfig } from '#core/config/app-config.js';
import { AgentService } from '#core/agent/agent.service.js';
import { ChatPlanBuilder } from '#core/agent/chat-plan-builder.js';
import type { ConversationTitles } from '#core/agent/conversation-titles.js';
import { RecordRetry } from '#core/agent/record-retry.js';
import { TurnPreamble } from '#core/agent/turn-preamble.js';
import { AppChatPlanBuilder } from '#core/apps/agent/app-chat-plan-builder.js';
import { AppRunPlanBuilder } from '#core/apps/agent/app-run-plan-builder.js';
import { RunSlots } from '#core/apps/agent/run-slots.js';
import { BrowserTurns } from '#core/browser/browser-turns.js';
import type { MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import { TeamMemberPlanBuilder } from '#core/teams/team-member-plan-builder.js';
import { TeamWork } from '#core/teams/team-work.js';
import { ConversationEvents } from '#core/agent/conversation-events.js';
import { ConversationToolsets } from '#core/agent/conversation-toolsets.js';
import { MessageAttachments } from '#core/agent/message-attachments.js';
import { ToolRegistry } from '#core/agent/tool-registry.js';
import { TurnPlanBuilders } from '#core/agent/turn-plan-builders.js';
import { AppChannelChat } from '#core/apps/agent/app-channel-chat.js';
import { AppChatService } from '#core/apps/agent/app-chat.service.js';
import { AppRunsService } from '#core/apps/agent/app-runs.service.js';
import { AppWork } from '#core/apps/agent/app-work.js';
import { EscalationAnswers } from '#core/apps/agent/escalation-answers.js';
import { AppData } from '#core/apps/app-data.js';
import { AppLifecycle } from '#core/apps/app-lifecycle.js';
import { AppsService } from '#core/apps/apps.service.js';
import { ApprovalsService } from '#core/approvals/approvals.service.js';
import { ConversationsService } from '#core/conversations/conversations.service.js';
import type { FileStore } from '#core/ports/file-store.port.js';
import type { SpaceFolders } from '#core/ports/space-folders.port.js';
import type { SkillsService } from '#core/skills/skills.service.js';
import { DomainError } from '#core/errors/domain-error.js';
import { McpServers } from '#core/mcp/mcp-servers.service.js';
import { ModelSourcesService } from '#core/models/model-sources.service.js';
import { Replica } from '#core/ports/replica.port.js';
import { SpacesService } from '#core/spaces/spaces.service.js';
import { FakeEventLog, FakeTurnRepository, RecordingEventBus } from './fake-agent-ports.js';
import { FakeAppRepository, RecordingAppScheduler } from './fake-apps.js';
import { RecordingChannelListener } from './fake-channels.js';
import { FakeConversationRepository } from './fake-conversations.js';
import { FakeFileStore, FakeWorkspaceSearch } from './fake-files.js';
import { RecordingPlanBuilder } from './fake-plan-builder.js';
import { FakeSettingsRepository } from './fake-settings.js';
import {
  FakeSpaceActivity,
  FakeSpaceFolders,
  RecordingAppCleanup,
  RecordingConversationCleanup,
} from './fake-space-ports.js';
import { FakeSpaceRepository } from './fake-spaces.js';
import { FakeAssistantApi, FakeCatalogFetcher, FakeMcpConnector, FakeShellRunner } from './fake-tools.js';
import { RecordingJobQueue } from './fake-triggers.js';
import { FakeClock, RecordingMetrics } from './fakes.js';
import { FakeAiBrowser } from './fake-browser.js';
import { FakeModelProvider } from './fake-model-provider.js';
import { FakeTeamRepository } from './fake-teams.js';
import { FakeKnowledgeTurns, FakeSkills, RecordingMemory, RecordingTitles } from './fake-turn-parts.js';
import { RecordingTurn } from './recording-turn.js';

/**
 * The core services of unit tests wired on the fakes of this folder, so each service spec
 * builds only what is its own: `spacesWorld` (spaces and model sources, what every context
 * stands on), `agentWorld` (the agent context on top) and `appsWorld` (digital humans on that).
 */

/** An assertion for `assert.rejects`/`throws`: a DomainError of `kind` with exactly `message` (and `reason`, its error code). */
export const refusal =
  (kind: DomainError['kind'], message: string, reason?: string) =>
  (err: unknown): true => {
    assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    assert.equal(err.message, message);
    if (reason !== undefined) assert.equal(err.reason, reason);
    return true;
  };

/** The configuration the worlds run with: data in `/data`, no MCP commands, Bash off unless asked. */
export function testConfig(options: { bash?: boolean } = {}): AppConfig {
  return {
    dataDir: '/data',
    spaceRoots: null,
    allowMcpCommands: false,
    mcpAllow: [],
    modelSeed: null,
    kbImportRoots: [],
    agent: { bash: options.bash ? 'sandboxed' : 'off', bashTimeoutMs: 1000, maxSteps: 25 },
  } as unknown as AppConfig;
}

/** Real spaces and model sources on in-memory ports, with a clock the test moves. */
/**
 * A real SpacesService on `folders` (a FakeSpaceFolders, or a FakeStoreFolders over a
 * FakeFileStore for the services that read files) with in-memory repository and recording
 * cleanups; the data folder is `/data` unless `config` says otherwise.
 */
export function spacesOn(
  folders: SpaceFolders,
  options: { config?: AppConfig; bus?: RecordingEventBus; repo?: FakeSpaceRepository } = {},
): SpacesService {
  return new SpacesService(
    options.repo ?? new FakeSpaceRepository(),
    folders,
    new FakeSpaceActivity(),
    new RecordingConversationCleanup(),
    new RecordingAppCleanup(),
    options.bus ?? new RecordingEventBus(),
    options.config ?? ({ dataDir: '/data', spaceRoots: null } as AppConfig),
    Replica.alone(),
  );
}

export function spacesWorld(config: AppConfig = testConfig()) {
  const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
  const bus = new RecordingEventBus();
  const spaceRepo = new FakeSpaceRepository();
  const settings = new FakeSettingsRepository();
  const folders = new FakeSpaceFolders().add('/data');
  const spaces = spacesOn(folders, { config, bus, repo: spaceRepo });
  const models = new ModelSourcesService(settings, bus, clock, config);
  /** Stores a space `/data/spaces/<id>` (its memory off when `memoryEnabled` is false). */
  const space = async (id = 's1', memoryEnabled = true) =>
    spaceRepo.insert({
      id,
      name: id,
      path: `/data/spaces/${id}`,
      icon: 'folder',
      color: null,
      isTemp: false,
      preferences: memoryEnabled ? {} : { memory: { enabled: false } },
    });
  return { config, clock, bus, spaceRepo, settings, folders, spaces, models, space };
}

/**
 * The agent context's real services (conversations, the agent, MCP servers) on in-memory ports.
 * Turns are queued, never run: `queue` records their jobs, `chat` the chat turns ended without a
 * plan (another kind's recorder is added with `builders.register`).
 */
export function agentWorld(options: { bash?: boolean } = {}) {
  const base = spacesWorld(testConfig(options));
  const { config, clock, bus, spaceRepo, settings, spaces, models } = base;
  const turns = new FakeTurnRepository();
  const conversationRepo = new FakeConversationRepository(turns);
  const appRepo = new FakeAppRepository(() => clock.now());
  const files = new FakeFileStore();
  const queue = new RecordingJobQueue();
  const chat = new RecordingPlanBuilder('chat');
  const builders = new TurnPlanBuilders(chat as unknown as ChatPlanBuilder);
  const conversations = new ConversationsService(conversationRepo, spaceRepo, clock);
  const events = new ConversationEvents(bus, new FakeEventLog());
  const toolsets = new ConversationToolsets(settings, events);
  const mcp = new McpServers(
    appRepo,
    spaceRepo,
    new FakeMcpConnector(),
    bus,
    clock,
    config,
    models,
    files,
    new FakeCatalogFetcher(),
  );
  const agent = new AgentService(
    turns,
    conversations,
    spaces,
    events,
    bus,
    queue,
    files,
    new ToolRegistry(files, new FakeWorkspaceSearch(files), new FakeShellRunner(true), config),
    clock,
    builders,
    config,
    mcp,
    toolsets,
    new MessageAttachments(files),
  );
  return {
    ...base,
    agent,
    turns,
    conversationRepo,
    conversations,
    appRepo,
    files,
    queue,
    chat,
    builders,
    mcp,
    events,
    toolsets,
  };
}

/**
 * Digital humans on the agent world: the real apps, chat and runs services (the runs registered
 * as at start), a scheduler, metrics and channel listener that record, and an app's turns ended
 * without a plan recorded by `appChat` / `appRun`. App data and skills are not touched.
 */
export function appsWorld(options: { bash?: boolean } = {}) {
  const base = agentWorld(options);
  const { config, clock, bus, spaceRepo, spaces, models, agent, turns, conversationRepo, conversations } = base;
  const { appRepo, queue, builders, mcp } = base;
  const scheduler = new RecordingAppScheduler();
  const lifecycle = new AppLifecycle();
  const noSkills = { installFor: async () => undefined, removeFor: async () => undefined } as unknown as SkillsService;
  const apps = new AppsService(
    appRepo,
    spaceRepo,
    new AppData({} as FileStore, {} as SpaceFolders, spaceRepo),
    lifecycle,
    scheduler,
    bus,
    clock,
    config,
    noSkills,
  );
  const work = new AppWork(lifecycle, agent, turns, conversations);
  work.onModuleInit();
  const channels = new AppChannelChat(apps, agent, conversations, spaces);
  const listener = new RecordingChannelListener();
  channels.listen(listener);
  const answers = new EscalationAnswers();
  const metrics = new RecordingMetrics();
  const approvals = new ApprovalsService(models, appRepo, conversationRepo, turns, bus, clock, metrics);
  const appChat = new RecordingPlanBuilder('app-chat');
  const appRun = new RecordingPlanBuilder('app-run');
  builders.register(appChat);
  builders.register(appRun);
  const chatService = new AppChatService(apps, agent, conversations, spaces, work, bus);
  const runs = new AppRunsService(
    apps,
    appRepo,
    agent,
    conversations,
    spaces,
    turns,
    queue,
    bus,
    clock,
    mcp,
    scheduler,
    answers,
    approvals,
    channels,
    metrics,
  );
  runs.onModuleInit();
  return {
    ...base,
    apps,
    scheduler,
    lifecycle,
    work,
    channels,
    listener,
    answers,
    metrics,
    approvals,
    appChat,
    appRun,
    chatService,
    runs,
  };
}

/**
 * The plan builders of the four turn kinds on the apps world: `chatPlan`, `appChatPlan`,
 * `appRunPlan` and `memberPlan`, with the real preamble, tool registry, browser turns (on
 * FakeAiBrowser), run slots and team work, and skills, knowledge bases, memory and titles that
 * record (`fake-turn-parts.ts`). `model()` adds the model source every turn needs; `io()` a
 * turn's recording io. The builders are not registered (`builders` holds the recorders).
 */
export function planWorld(options: { bash?: boolean } = {}) {
  const base = appsWorld(options);
  const { config, clock, bus, spaceRepo, spaces, models, agent, turns, conversations, files, queue, mcp } = base;
  const { apps, runs, channels, builders, toolsets, settings } = base;
  const skills = new FakeSkills();
  const knowledge = new FakeKnowledgeTurns();
  const memory = new RecordingMemory();
  const titles = new RecordingTitles();
  const aiBrowser = new FakeAiBrowser();
  const browser = new BrowserTurns(aiBrowser);
  const assistantApi = new FakeAssistantApi();
  const preamble = new TurnPreamble(spaces, models, new FakeModelProvider(), skills);
  const tools = new ToolRegistry(files, new FakeWorkspaceSearch(files), new FakeShellRunner(true), config);
  const data = new AppData(files, new FakeSpaceFolders().add('/data'), spaceRepo);
  const teams = new FakeTeamRepository();
  const teamWork = new TeamWork(teams, turns, agent, conversations, spaces, bus, clock, runs, config, queue);
  const chatPlan = new ChatPlanBuilder(
    conversations,
    spaces,
    preamble,
    models,
    tools,
    memory as unknown as MemoryConsolidationService,
    clock,
    RecordRetry.never(),
    mcp,
    assistantApi,
    browser,
    toolsets,
    knowledge,
    titles as unknown as ConversationTitles,
    new MessageAttachments(files),
  );
  const appChatPlan = new AppChatPlanBuilder(
    builders,
    apps,
    data,
    conversations,
    preamble,
    tools,
    clock,
    mcp,
    assistantApi,
    bus,
    browser,
    knowledge,
    channels,
  );
  const appRunPlan = new AppRunPlanBuilder(
    builders,
    apps,
    runs,
    data,
    conversations,
    preamble,
    tools,
    clock,
    mcp,
    skills,
    assistantApi,
    new RunSlots(2),
    browser,
    knowledge,
  );
  const memberPlan = new TeamMemberPlanBuilder(
    builders,
    apps,
    data,
    conversations,
    preamble,
    tools,
    clock,
    bus,
    teams,
    turns,
    teamWork,
  );
  /** The model source turns resolve (the current one). */
  const model = () =>
    models.addSource({ id: 'main', name: 'Main', provider: 'anthropic', apiUrl: 'http://model.invalid', model: 'm1' });
  /** A turn's io that records what it is told (`RecordingTurn`). */
  const io = () => new RecordingTurn();
  /** Stores a space `/data/spaces/<id>` whose folder exists. */
  const space = async (id = 's1', memoryEnabled = true) => {
    base.folders.add(`/data/spaces/${id}`);
    return base.space(id, memoryEnabled);
  };
  return {
    ...base,
    space,
    settings,
    skills,
    knowledge,
    memory,
    titles,
    aiBrowser,
    browser,
    assistantApi,
    preamble,
    tools,
    data,
    teams,
    teamWork,
    chatPlan,
    appChatPlan,
    appRunPlan,
    memberPlan,
    model,
    io,
  };
}
