/**
 * Knowledge bases (docs/api/knowledge.md; the "Knowledge bases" operation group, paths under
 * `/api/tlon`, events `tlon:*`): records, sources, ingestion status and search hits as clients see them.
 */

export type KnowledgeBaseStatus = 'active' | 'paused' | 'error';

export interface KnowledgeStatsDto {
  rawFileCount: number;
  indexedCount: number;
  chunkCount: number;
  rawSizeBytes: number;
  lastIngestAt?: string;
}

export interface KnowledgeEmbeddingDto {
  modelSourceId: string;
  model: string;
  dimensions: number;
}

export interface KnowledgeBaseDto {
  id: string;
  name: string;
  icon?: string;
  description?: string;
  status: KnowledgeBaseStatus;
  createdAt: string;
  updatedAt: string;
  spaceIds: string[];
  appIds: string[];
  isDefault: boolean;
  stats: KnowledgeStatsDto;
  embedding: KnowledgeEmbeddingDto | null;
  /** How search works here: `keyword` (no embedding model, or no vector index in this database) or `hybrid`. */
  searchMode: 'keyword' | 'hybrid';
  /** Why search is keyword-only although an embedding model is set (the database lacks pgvector); absent otherwise. */
  searchNote?: string;
}

export type SourceState = 'pending' | 'learned' | 'no-text' | 'failed';

export interface RawFileDto {
  name: string;
  /** Inside the knowledge base: the path the source is known by (`remove-raw`'s `relativePath`). */
  path: string;
  size: number;
  learned: boolean;
  state: SourceState;
  error?: string;
  source: 'raw' | 'linked';
}

/** A linked folder: a folder of a workspace whose accepted files are sources, kept in step with it. */
export interface LinkedDirDto {
  id: string;
  kbId: string;
  spaceId: string;
  /** Inside the space's folder, forward slashes ('' for the whole space). */
  path: string;
  label?: string;
  /** `error`: the folder could not be read (gone, or not a folder); `error` says why. */
  state: 'active' | 'error';
  error?: string;
  /** Sources it brings. */
  fileCount: number;
  /** The folder inside the knowledge base its sources are listed under (`raw`'s paths start with it). */
  prefix: string;
  createdAt: string;
}

export interface AddFilesResultDto {
  added: string[];
  rejected: Array<{ path: string; reason: string }>;
}

export interface IngestStatusDto {
  kbId: string;
  total: number;
  completed: number;
  current?: string;
  phase: 'idle' | 'running' | 'done' | 'error';
  errors: Array<{ file: string; message: string }>;
}

export interface KnowledgeSourceRefDto {
  name: string;
  path: string;
}

export interface SearchHitDto {
  chunkId: string;
  sourceName: string;
  sourcePath: string;
  heading?: string;
  text: string;
  score: number;
  /** The knowledge base the chunk belongs to (a search over several says which). */
  kbId: string;
}

export const KnowledgeChannels = {
  ingestProgress: 'tlon:ingest-progress',
  statsUpdated: 'tlon:stats-updated',
} as const;

export interface KnowledgeStatsUpdatedEvent {
  kbId: string;
  stats: KnowledgeStatsDto;
}
