import { APP_PERMISSIONS, type AppType } from '#contracts/apps.js';

/**
 * The normalized spec of a digital human (docs/api/digital-humans.md, "The spec file"): canonical
 * field names only, unknown fields dropped, defaults filled. Field names keep the file's
 * snake_case because the spec is a file format that round-trips through export and import.
 */
export interface AppSpec {
  spec_version: string;
  name: string;
  display_name?: string;
  version: string;
  /** Required except for skills. */
  author?: string;
  description: string;
  icon?: string;
  type: AppType;
  /** Required for automation and skill. */
  system_prompt?: string;
  permissions?: string[];
  requires?: Requirements;
  config_schema?: ConfigField[];
  store?: StoreInfo;
  i18n?: Record<string, I18nBlock>;
  subscriptions?: Subscription[];
  filters?: FilterRule[];
  memory_schema?: Record<string, MemoryField>;
  output?: OutputSettings;
  escalation?: EscalationSettings;
  recommended_model?: string;
  browser_login?: BrowserLogin[];
  /** Required for `mcp` apps: how the MCP server process starts. */
  mcp_server?: McpServerDefinition;
}

/** The order a spec file lists its top-level fields in (export writes them so). */
export const TOP_LEVEL_FIELDS: ReadonlyArray<keyof AppSpec> = [
  'spec_version',
  'name',
  'display_name',
  'version',
  'author',
  'description',
  'icon',
  'type',
  'system_prompt',
  'permissions',
  'requires',
  'config_schema',
  'subscriptions',
  'filters',
  'memory_schema',
  'output',
  'escalation',
  'recommended_model',
  'browser_login',
  'mcp_server',
  'store',
  'i18n',
];

export interface Requirements {
  mcps?: McpRequirement[];
  skills?: SkillRequirement[];
}

export interface McpRequirement {
  id: string;
  reason?: string;
  bundled?: boolean;
  enabled?: boolean;
}

export interface SkillRequirement {
  id: string;
  reason?: string;
  bundled?: boolean;
  files?: string[];
}

export const CONFIG_FIELD_TYPES = ['url', 'text', 'string', 'number', 'select', 'boolean', 'email'] as const;
export type ConfigFieldType = (typeof CONFIG_FIELD_TYPES)[number];

export type OptionValue = string | number | boolean;

export interface ConfigField {
  key: string;
  label: string;
  type: ConfigFieldType;
  description?: string;
  placeholder?: string;
  required?: boolean;
  default?: unknown;
  options?: Array<{ label: string; value: OptionValue }>;
}

export interface StoreInfo {
  slug?: string;
  category?: string;
  tags: string[];
  locale?: string;
  min_app_version?: string;
  license?: string;
  homepage?: string;
  repository?: string;
}

export interface I18nBlock {
  name?: string;
  description?: string;
  config_schema?: Record<
    string,
    { label?: string; description?: string; placeholder?: string; options?: Record<string, string> }
  >;
  browser_login?: Record<string, { label?: string }>;
}

/**
 * The permissions a spec may ask for: the capabilities of the spec format (APP_PERMISSIONS:
 * `ai-browser`, `ai-terminal`, `email`, …) and the built-in
 * tools by name, as published digital humans list them (`read`, `bash`, `web_fetch`, …).
 */
export const KNOWN_PERMISSIONS: readonly string[] = [
  ...APP_PERMISSIONS,
  'read',
  'write',
  'edit',
  'bash',
  'shell',
  'shell.execute',
  'glob',
  'grep',
  'todo_write',
  'web_fetch',
  'web_search',
  'ask_user_question',
];

/** At most this many subscriptions per digital human (each one may start runs). */
export const SUBSCRIPTIONS_MAX = 50;

export const SOURCE_TYPES = ['schedule', 'file', 'webhook', 'webpage', 'rss', 'custom', 'wecom'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export interface Subscription {
  /** Given, or the subscription's position ("0", "1", ...). */
  id: string;
  source: { type: SourceType; config: Record<string, unknown> };
  frequency?: { default: string; min?: string; max?: string };
  config_key?: string;
}

export const FILTER_OPS = ['eq', 'neq', 'contains', 'matches', 'gt', 'lt', 'gte', 'lte'] as const;

export interface FilterRule {
  field: string;
  op: (typeof FILTER_OPS)[number];
  value: unknown;
}

export interface MemoryField {
  type: string;
  hint?: string;
  description?: string;
}

export const NOTIFY_CHANNELS = ['email', 'wecom', 'dingtalk', 'feishu', 'webhook'] as const;

export interface OutputSettings {
  notify?: { system?: boolean; channels?: Array<(typeof NOTIFY_CHANNELS)[number]> };
  format?: string;
}

export interface EscalationSettings {
  enabled?: boolean;
  timeout_hours?: number;
}

export interface BrowserLogin {
  url: string;
  label: string;
}

export const MCP_TRANSPORTS = ['stdio', 'http'] as const;

/**
 * How an `mcp` app's server is reached (spec `mcp_server`): a local command spoken to over
 * stdio, or a streamable-HTTP endpoint (`type: http` with `url`, `headers`), as in the MCP
 * client configuration format (docs/api/mcp-and-skills.md, "MCP servers").
 */
export interface McpServerDefinition {
  type?: (typeof MCP_TRANSPORTS)[number];
  /** stdio: the program to run, its arguments and environment (`{{config.key}}` takes a setting). */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** stdio: the folder to run in, relative to the app's space folder (default: that folder itself). */
  cwd?: string;
  /** http: the streamable-HTTP endpoint and request headers (`{{config.key}}` takes a setting). */
  url?: string;
  headers?: Record<string, string>;
}
