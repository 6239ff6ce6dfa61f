import type { TrashEntry } from '#contracts/artifacts.js';
/**
 * Schemas of what operations answer in `data`, one per wire type of `libs/contracts` (and the
 * few core types controllers answer directly). `shape<T>()` makes the typecheck fail when a
 * type gains or loses a field its schema does not list. Use them with `@ApiData(...)`.
 */
import type {
  AskQuestion,
  PendingApprovalDto,
  SessionState,
  ThoughtType,
  ToolsetEntry,
  ApiRetryInfo,
} from '#contracts/agent.js';
import type { RemoteStatus, SecurityPolicy } from '#contracts/api.js';
import type { McpServerStatusDto, McpToolDto } from '#contracts/mcp.js';
import type { BrowserLivePage, BrowserLoginSite, BrowserStopResult } from '#contracts/browser.js';
import {
  ACTIVITY_TYPES,
  type ActivityEntryDto,
  APP_STATUSES,
  type AppChatSessionStateDto,
  type AppDto,
  type AppPermissionsDto,
  type AutomationStateDto,
  type AutomationTriggerDto,
  type RunTriggerResult,
  UPGRADE_STRATEGIES,
} from '#contracts/apps.js';
import {
  type ConversationDto,
  type ConversationSummaryDto,
  type CreatedConversationDto,
  type MessageDto,
  MESSAGE_ROLES,
  REASONING_EFFORTS,
  type ThoughtDto,
  type TokenUsage,
} from '#contracts/conversations.js';
import {
  AI_PROVIDERS,
  type AISource,
  type AISourcesConfig,
  type AvailableModel,
  type CurrentSelection,
} from '#contracts/models.js';
import { MEMORY_CADENCES, type MemoryPreferences, type MemoryState, type SpaceDto } from '#contracts/spaces.js';
import type { ArtifactEntry, ArtifactTree, ChildEntry, FileContent } from '#core/artifacts/artifact.js';
import type { ArtifactQueryResult } from '#core/artifacts/artifact-search.service.js';
import type { FileTypeInfo } from '#core/artifacts/file-types.js';
import type { IndexedPath } from '#core/artifacts/path-index.js';
import type { ConsolidationStart } from '#core/memory/memory-consolidation.service.js';
import type { BackupReport } from '#core/ports/backup.port.js';
import {
  anyObject,
  anyValue,
  arr,
  bool,
  component,
  int,
  isoTime,
  nullable,
  num,
  obj,
  oneOfValues,
  opt,
  type Schema,
  shape,
  str,
} from './schema.js';

const epochMs = (description?: string) => int(description ?? 'Epoch milliseconds');

// Platform

export const REMOTE_STATUS = component(
  'RemoteStatus',
  shape<RemoteStatus>({
    active: bool(),
    clients: int('Signed-in WebSocket connections'),
    version: str('The remote-access protocol version, always 1.0.0 (not the release)'),
    serverVersion: str("The server's release, as GET /api/system/version answers it"),
  }),
);
export const SECURITY_POLICY = component(
  'SecurityPolicy',
  shape<SecurityPolicy>({ tunnelSafe: bool(), browserAllowlistEditable: bool() }),
);
export const BACKUP_REPORT = component(
  'BackupReport',
  shape<BackupReport>({
    path: str('Absolute path of the backup folder'),
    databaseBytes: int(),
    files: int('Files copied from the data folder'),
  }),
);
export const PATH_RESULT = obj({ path: str('Absolute path') }, ['path']);

// Spaces

const MEMORY_PREFERENCES = shape<MemoryPreferences>({
  enabled: bool(),
  autoConsolidate: bool(),
  cadence: oneOfValues(MEMORY_CADENCES),
});
export const SPACE_PREFERENCES = component('SpacePreferences', obj({ memory: MEMORY_PREFERENCES }, ['memory']));
export const SPACE = component(
  'Space',
  shape<SpaceDto>({
    id: str(),
    name: str(),
    path: str('Absolute working folder'),
    icon: str(),
    color: opt(str()),
    isTemp: bool(),
    preferences: SPACE_PREFERENCES,
    createdAt: isoTime(),
    updatedAt: isoTime(),
  }),
);
export const MEMORY_STATE = component(
  'MemoryState',
  shape<MemoryState>({
    exists: bool(),
    totalBytes: int(),
    topicCount: int(),
    lastConsolidatedAt: nullable(isoTime()),
    lastAttempt: nullable(obj({ at: isoTime(), outcome: str(), reason: str() }, ['at', 'outcome'])),
    consolidating: bool(),
  }),
);
export const CONSOLIDATION_START = shape<ConsolidationStart>({
  started: bool(),
  reason: opt(oneOfValues(['already-running', 'empty'])),
});

// Conversations

const TOKEN_USAGE = shape<TokenUsage>({
  inputTokens: int(),
  outputTokens: int(),
  cacheReadTokens: int(),
  cacheCreationTokens: int(),
  totalCostUsd: num(),
  contextWindow: int(),
});
export const THOUGHT = component(
  'Thought',
  shape<ThoughtDto>(
    {
      id: str(),
      type: str('thinking, text, tool_use, tool_result, …'),
      content: str(),
      timestamp: isoTime(),
      toolName: opt(str()),
      toolInput: opt(anyObject()),
      toolOutput: opt(anyValue('Raw tool result; can be long')),
      isError: opt(bool()),
    },
    { open: true, description: 'Stored as given: fields beyond these are kept and returned' },
  ),
);
export const MESSAGE = component(
  'Message',
  shape<MessageDto>(
    {
      id: str(),
      role: oneOfValues(MESSAGE_ROLES),
      content: str(),
      createdAt: isoTime(),
      images: opt(arr(anyObject())),
      attachments: opt(
        arr(
          obj(
            {
              path: str("Relative to the space's folder"),
              name: str(),
              mediaType: str(),
              size: int('Bytes, when sent'),
              image: bool('Handed to the model as an image; otherwise named for it to Read'),
            },
            ['path', 'name', 'mediaType', 'size', 'image'],
          ),
          'Files of the space sent with the message (a user message)',
        ),
      ),
      tokenUsage: opt({ ...TOKEN_USAGE, required: undefined }),
      error: opt(str()),
      superseded: opt(bool('Replaced by Regenerate or an edit: left out of the model context')),
    },
    { open: true, description: 'Facts the agent engine recorded appear when set' },
  ),
);
const summaryProperties = {
  id: str(),
  spaceId: str(),
  title: str(),
  starred: bool(),
  ephemeral: bool(),
  reasoningEffort: opt(oneOfValues(REASONING_EFFORTS, "Absent: the model's configured effort")),
  modelSourceId: opt(str('The pin; with modelId')),
  modelId: opt(str('The pin; with modelSourceId')),
  createdAt: isoTime(),
  updatedAt: isoTime(),
  messageCount: int('Messages in the whole conversation'),
};
export const CONVERSATION_SUMMARY = component('ConversationSummary', shape<ConversationSummaryDto>(summaryProperties));
export const CONVERSATION = component(
  'Conversation',
  shape<ConversationDto>({
    ...summaryProperties,
    messages: arr(MESSAGE),
    messagesFrom: opt(str('The `from` message id, echoed when `?from=` was used')),
  }),
);
export const CREATED_CONVERSATION = shape<CreatedConversationDto>({ id: str(), title: str() });

// Agent

const THOUGHT_TYPES: readonly ThoughtType[] = [
  'thinking',
  'text',
  'tool_use',
  'tool_result',
  'system',
  'result',
  'error',
];
const ASK_QUESTION = shape<AskQuestion>({
  question: str(),
  header: str(),
  options: arr(obj({ label: str(), description: str() }, ['label', 'description'])),
  multiSelect: bool(),
});
const API_RETRY = shape<ApiRetryInfo>({
  attempt: int(),
  maxRetries: int(),
  delayMs: int(),
  errorStatus: nullable(int()),
  errorKind: str(),
  errorMessage: opt(str()),
});
export const SESSION_STATE = component(
  'SessionState',
  shape<SessionState>({
    conversationId: str(),
    spaceId: nullable(str()),
    active: bool(),
    turnId: nullable(str()),
    status: nullable(str()),
    startedAt: nullable(isoTime()),
    thoughts: arr({ ...(THOUGHT as object), description: `Types: ${THOUGHT_TYPES.join(', ')}` }),
    pendingQuestion: nullable(obj({ id: str(), questions: arr(ASK_QUESTION) }, ['id', 'questions'])),
    pendingApproval: nullable(
      shape<PendingApprovalDto>({
        toolId: str('The tool-use id of agent:tool-call'),
        name: str(),
        input: anyObject('The input the tool will run with'),
        deadline: isoTime('After this the call is rejected'),
      }),
    ),
    pendingRetry: nullable(API_RETRY),
    replicaId: nullable(str('Which server process runs the turn')),
  }),
);
export const TOOLSET = shape<ToolsetEntry>({ id: str(), displayName: str(), summary: str(), open: bool() });
export const MCP_SERVER_STATUS = component(
  'McpServerStatus',
  shape<McpServerStatusDto>({
    name: str('The server name its tools carry: mcp__<name>__<tool>'),
    status: oneOfValues(['connecting', 'connected', 'failed', 'stopped']),
    tools: arr(shape<McpToolDto>({ name: str(), description: str() })),
    error: nullable(str()),
    appId: opt(str('The mcp app that defines it (absent for servers given to test-mcp)')),
  }),
);
export const MODEL_SOURCE_TEST = obj(
  {
    ok: bool('Whether the model answered'),
    modelId: str('The model called'),
    latencyMs: int('Time to the complete one-token reply (when ok)'),
    error: str("The provider's message, no secrets (when not ok)"),
  },
  ['ok', 'modelId'],
);
export const ENGINE_CAPABILITIES = anyObject('What this engine supports: providers, tools, thinking, images, …');

// Model sources and configuration

const AVAILABLE_MODEL = shape<AvailableModel>({
  id: str(),
  name: str(),
  description: opt(str()),
  supportsVision: opt(bool()),
});
const AI_SOURCE = shape<AISource>({
  id: str('The modelSourceId conversations pin'),
  name: str(),
  provider: oneOfValues(AI_PROVIDERS),
  authType: oneOfValues(['api-key']),
  apiUrl: str(),
  apiKey: str('Always "***" (or "" without a key)'),
  model: str(),
  availableModels: arr(AVAILABLE_MODEL),
  createdAt: isoTime(),
  updatedAt: isoTime(),
});
export const AI_SOURCES_CONFIG = component(
  'AISourcesConfig',
  shape<AISourcesConfig>({
    version: { type: 'integer', const: 2 },
    currentId: nullable(str()),
    sources: arr(AI_SOURCE),
  }),
);
export const APP_CONFIGURATION = component('AppConfiguration', {
  ...obj({ aiSources: AI_SOURCES_CONFIG }, ['aiSources']),
  additionalProperties: true,
  description: 'The sources plus every other stored top-level branch, secrets masked as "***"',
});
export const CURRENT_SELECTION = shape<CurrentSelection>({ currentId: nullable(str()), currentModel: nullable(str()) });

// Files

const entryProperties = {
  id: str('The relative path (stable within a space)'),
  name: str(),
  type: oneOfValues(['file', 'folder']),
  path: str('Absolute path'),
  relativePath: str('Inside the space, forward slashes'),
  extension: str('Lower case, no dot; "" for folders'),
  size: int('Bytes (0 for folders)'),
};
export const ARTIFACT_ENTRY = component('ArtifactEntry', shape<ArtifactEntry>(entryProperties));
export const CHILD_ENTRY = shape<ChildEntry>({ ...entryProperties, childrenLoaded: opt(bool()) });
const TREE_NODE: Schema = {
  ...obj(entryProperties, Object.keys(entryProperties)),
  properties: {
    ...entryProperties,
    childrenLoaded: bool('Folders: false means load them with the children operation'),
    children: arr({ $ref: '#/components/schemas/TreeNode' }),
  },
};
const TREE_NODE_REF = component('TreeNode', TREE_NODE);
export const ARTIFACT_TREE = shape<ArtifactTree>({ workspaceRoot: str(), nodes: arr(TREE_NODE_REF) });
export const TRASH_ENTRY = component(
  'TrashEntry',
  shape<TrashEntry>({
    id: str("The entry's name in the data folder's trash: what restore and delete take"),
    path: str("Where it was, relative to the space's folder"),
    deletedAt: isoTime('When it was moved to the trash'),
    isDirectory: bool(),
    size: opt(int('Bytes, for a file')),
  }),
);
export const RESTORED_PATH = obj(
  { path: str('Absolute path'), relativePath: str("Inside the space's folder, forward slashes") },
  ['path', 'relativePath'],
);
export const FILE_CONTENT = shape<FileContent>({
  content: str(),
  mimeType: str(),
  encoding: oneOfValues(['utf-8', 'base64']),
  size: int(),
});
export const FILE_TYPE = shape<FileTypeInfo>({
  isText: bool(),
  canViewInCanvas: bool(),
  contentType: str('markdown, html, json, code, csv, text, image, pdf, audio, video or binary'),
  mimeType: str(),
});
const INDEXED_PATH = shape<IndexedPath>({
  name: str(),
  type: oneOfValues(['file', 'folder']),
  path: str(),
  relativePath: str(),
});
export const ARTIFACT_QUERY = shape<ArtifactQueryResult>({
  items: arr(INDEXED_PATH),
  truncated: bool('The space has more paths than the index holds'),
  indexing: bool('The index is being built; a repeated query may find more'),
});

// Digital humans

const PERMISSIONS = shape<AppPermissionsDto>({ granted: arr(str()), denied: arr(str()) });
export const APP = component(
  'App',
  shape<AppDto>({
    id: str(),
    spaceId: nullable(str('null: installed for every workspace')),
    spec: anyObject('The normalized spec'),
    status: oneOfValues(APP_STATUSES),
    userConfig: anyObject(),
    userOverrides: anyObject(),
    permissions: PERMISSIONS,
    upgradeStrategy: oneOfValues(UPGRADE_STRATEGIES),
    builtIn: bool(),
    installedAt: epochMs(),
    updatedAt: epochMs(),
    uninstalledAt: opt(epochMs()),
    lastRunAt: opt(epochMs()),
    errorMessage: opt(str()),
    pendingEscalationId: opt(str()),
  }),
);
export const AUTOMATION_STATE = component(
  'AutomationState',
  shape<AutomationStateDto>({
    status: oneOfValues(['idle', 'running', 'paused', 'waiting_user', 'needs_login', 'error', 'uninstalled']),
    automaticEnabled: bool(),
    runningCount: int(),
    nextRunAtMs: nullable(epochMs()),
    lastRunAtMs: nullable(epochMs()),
    lastStatus: nullable(oneOfValues(['ok', 'error', 'skipped'])),
    lastError: nullable(str()),
    pendingEscalationId: nullable(str()),
    triggers: arr(
      shape<AutomationTriggerDto>({
        id: str(),
        type: str('Subscription source type'),
        fires: bool('Whether this subscription starts runs (schedule, file, webhook)'),
        note: opt(str('Why it never fires')),
        path: opt(str('Webhook path after /hooks/')),
      }),
    ),
  }),
);
export const ACTIVITY_ENTRY = component(
  'ActivityEntry',
  shape<ActivityEntryDto>({
    id: str(),
    runId: nullable(str()),
    type: oneOfValues(ACTIVITY_TYPES),
    ts: epochMs(),
    content: anyObject(),
  }),
);
const runStarted = {
  outcome: oneOfValues(['started']),
  runId: str(),
  conversationId: str(),
};
const runSkipped = { outcome: oneOfValues(['skipped']), runId: { type: 'null' }, reason: str() };
export const RUN_TRIGGER_RESULT = component('RunTriggerResult', {
  oneOf: [
    shape<Extract<RunTriggerResult, { outcome: 'started' }>>(runStarted),
    shape<Extract<RunTriggerResult, { outcome: 'skipped' }>>(runSkipped),
  ],
});
export const ESCALATION_RESPONSE = {
  oneOf: [
    obj({ ...runStarted, response: str() }, ['outcome', 'runId', 'conversationId', 'response']),
    obj({ ...runSkipped, response: str() }, ['outcome', 'runId', 'reason', 'response']),
  ],
};
export const APP_CHAT_SESSION_STATE = shape<AppChatSessionStateDto>({
  isActive: bool(),
  thoughts: arr(THOUGHT),
  spaceId: nullable(str()),
});
export const APP_ID = obj({ appId: str() }, ['appId']);
export const RUN_ID = obj({ runId: str() }, ['runId']);
export const NULL_DATA: Schema = { type: 'null' };

export const BROWSER_LIVE_PAGE = component(
  'BrowserLivePage',
  shape<BrowserLivePage>({
    viewId: str(),
    conversationId: nullable(str()),
    spaceId: nullable(str()),
    url: nullable(str()),
    title: nullable(str()),
    owned: bool('The conversation opened this page'),
    active: bool("The conversation's active page"),
  }),
);
export const BROWSER_STOP_RESULT = shape<BrowserStopResult>({
  stopped: bool(),
  reason: opt(oneOfValues(['not-owned', 'in-use'])),
});
export const BROWSER_LOGIN_SITE = shape<BrowserLoginSite>({
  url: str(),
  label: str(),
  signedIn: bool('The space profile holds cookies for this domain (a hint, not a verified sign-in)'),
});
