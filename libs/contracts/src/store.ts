/** Store wire shapes (docs/api/store-and-packages.md). */

export const STORE_ENTRY_TYPES = ['automation', 'skill', 'mcp', 'extension'] as const;
export type StoreEntryType = (typeof STORE_ENTRY_TYPES)[number];

/** Source protocols; every user-added source is read as `svc`. */
export const STORE_SOURCE_TYPES = ['svc', 'dhp-v2', 'mcp-registry', 'smithery', 'claude-skills', 'skillhub'] as const;
export type StoreSourceType = (typeof STORE_SOURCE_TYPES)[number];

/** One entry of a static catalog index (snake_case: it is a file format). */
export interface StoreEntry {
  slug: string;
  name: string;
  version: string;
  author: string;
  description: string;
  type: StoreEntryType;
  path: string;
  category: string;
  tags: string[];
  download_url?: string;
  display_name?: string;
  icon?: string;
  locale?: string;
  min_app_version?: string;
  i18n?: Record<string, { name?: string; description?: string }>;
  requires_mcps?: string[];
  requires_skills?: string[];
  size_bytes?: number;
  checksum?: string;
  created_at?: string;
  updated_at?: string;
  meta?: Record<string, unknown>;
  format?: string;
}

/** A listing entry as answered: the entry, names resolved for the locale, and where it comes from. */
export type StoreListingDto = StoreEntry & { registryId: string };

export interface RegistrySourceDto {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  isDefault: boolean;
  sourceType?: string;
  adapterConfig?: Record<string, unknown>;
}

export interface SourceStatusDto {
  registryId: string;
  status: 'ok' | 'error';
  error?: string;
  /** Entries of the index that broke a rule and were left out. */
  skipped?: number;
}

export interface StoreQueryResultDto {
  items: StoreListingDto[];
  total: number;
  hasMore: boolean;
  groups: Array<{ type: string; count: number; hasMore: boolean }>;
  sources: SourceStatusDto[];
}

export interface StoreDetailDto {
  entry: StoreListingDto;
  spec: Record<string, unknown>;
  registryId: string;
}

/** A creator's own listing on a dhp-v2 store server (docs/api/store-and-packages.md, "Query, install, updates": Publishing). */
export interface PublicationDto {
  slug: string;
  name?: string;
  displayName?: string;
  type?: string;
  version: string;
  status: 'listed' | 'hidden' | 'rejected';
  takedownBy?: string;
  rejectReason?: string;
  submittedAt?: string;
  channel?: string;
  installs?: number;
}

export interface StoreCapabilitiesDto {
  catalog: true;
  installs: boolean;
  publish: boolean;
  reviewWorkflow: boolean;
  identity: string;
}

export interface CategoryDto {
  id: string;
  label: string;
  icon?: string;
}

export interface CategoryTaxonomyDto {
  default: CategoryDto[];
  [type: string]: CategoryDto[];
}

export interface DiscoverNodeDto {
  type: string;
  title?: string;
  subtitle?: string;
  entries?: StoreListingDto[];
  hasMore?: boolean;
}

export interface DiscoverPageDto {
  version: number;
  nodes: DiscoverNodeDto[];
}

export type UpdateSeverity = 'major' | 'minor' | 'patch';
export const APPLY_MODES = ['patch_minor', 'major', 'force'] as const;
export type ApplyMode = (typeof APPLY_MODES)[number];

export interface UpdateItemDto {
  appId: string;
  currentVersion: string;
  latestVersion: string;
  entry: StoreListingDto;
  strategy: string;
  severity: UpdateSeverity;
  /** Set when an automatic update was not applied because a policy refuses it (the reason). */
  heldReason?: string;
}

export interface ApplyResultDto {
  appId: string;
  from: string;
  to: string;
  severity: UpdateSeverity;
  kept: string[];
  editsKnown: boolean;
}

/**
 * Store events to every connection (the spec names no store channel; these follow the original
 * product): a source read finished, and an update found by check-now that was not applied.
 */
export const StoreChannels = {
  syncStatusChanged: 'store:sync-status-changed',
  upgradeAvailable: 'store:upgrade-available',
} as const;

export interface StoreSyncStatusEvent {
  registryId: string;
  status: 'ok' | 'error';
  /** Whether the entries moved (false on error or an unchanged index). */
  changed: boolean;
  error?: string;
}

export interface StoreUpgradeAvailableEvent {
  appId: string;
  currentVersion: string;
  latestVersion: string;
  severity: string;
  strategy: string;
}
