import type {
  IngestStatusDto,
  KnowledgeBaseStatus,
  KnowledgeEmbeddingDto,
  KnowledgeStatsDto,
  SourceState,
} from '#contracts/knowledge.js';
import type { ModelEndpoint } from '../ports/model-provider.port.js';

/**
 * The ports of the knowledge context (docs/api/knowledge.md): records and chunks in the
 * database, source files on disk, and document text extraction. Adapters in
 * libs/infra/src/knowledge/, bound in InfraModule.
 */

export interface KnowledgeBaseRecord {
  id: string;
  name: string;
  icon: string | null;
  description: string | null;
  status: KnowledgeBaseStatus;
  isDefault: boolean;
  embedding: KnowledgeEmbeddingDto | null;
  /** Why the embedding model cannot be used (no such source, no embeddings endpoint); null when it can. */
  embeddingError: string | null;
  /** How many times `clear-relearn` dropped the index. */
  generation: number;
  lastIngestAt: string | null;
  createdAt: string;
  updatedAt: string;
  spaceIds: string[];
  appIds: string[];
}

export interface KnowledgeBaseChanges {
  name?: string;
  icon?: string | null;
  description?: string | null;
  status?: KnowledgeBaseStatus;
  embedding?: KnowledgeEmbeddingDto | null;
  embeddingError?: string | null;
}

export interface SourceRecord {
  id: string;
  kbId: string;
  /** Where it lies under the knowledge base's `raw/` folder, forward slashes. */
  relPath: string;
  name: string;
  origin: 'raw' | 'linked';
  size: number;
  contentHash: string;
  /** The content hash whose chunks are in the index (null: none yet). */
  indexedHash: string | null;
  state: SourceState;
  error: string | null;
  /** The embedding model (`embeddingKey`) whose vectors its chunks carry; null: none. */
  embeddingKey: string | null;
}

export interface NewSource {
  kbId: string;
  relPath: string;
  name: string;
  origin: 'raw' | 'linked';
  size: number;
  contentHash: string;
}

export interface ChunkRow {
  heading: string | null;
  text: string;
  /** The keyword index entry, a `tsvector` literal (lexemes.ts). */
  tsv: string;
  /** The chunk's vector (unit length), when the knowledge base has an embedding model. */
  embedding: number[] | null;
}

/** What ingesting one source produced. */
export type IndexOutcome =
  | { state: 'learned'; chunks: ChunkRow[]; embeddingKey: string | null }
  | { state: 'no-text' }
  | { state: 'failed'; error: string };

export interface KeywordHit {
  chunkId: string;
  kbId: string;
  sourceName: string;
  sourcePath: string;
  heading: string | null;
  text: string;
  score: number;
}

/** A knowledge base's ingestion, with the sources of its batch that are not done yet. */
export interface IngestRecord extends IngestStatusDto {
  batchId: string;
  waiting: string[];
}

/** A linked folder as stored. */
export interface LinkRecord {
  id: string;
  kbId: string;
  spaceId: string;
  path: string;
  label: string | null;
  state: 'active' | 'error';
  error: string | null;
  createdAt: string;
}

export abstract class KnowledgeRepository {
  abstract create(input: {
    id: string;
    name: string;
    icon: string | null;
    description: string | null;
  }): Promise<KnowledgeBaseRecord>;
  abstract list(): Promise<KnowledgeBaseRecord[]>;
  abstract get(kbId: string): Promise<KnowledgeBaseRecord | null>;
  abstract update(kbId: string, changes: KnowledgeBaseChanges): Promise<KnowledgeBaseRecord | null>;
  /** Deletes the base with its bindings, sources, chunks and status; false when there was none. */
  abstract delete(kbId: string): Promise<boolean>;
  /** Makes `kbId` the one default (null: none). */
  abstract setDefault(kbId: string | null): Promise<void>;
  abstract bind(kbId: string, kind: 'space' | 'app', targetId: string): Promise<void>;
  abstract unbind(kbId: string, kind: 'space' | 'app', targetId: string): Promise<void>;
  /** The bases bound to a space or app. */
  abstract boundTo(kind: 'space' | 'app', targetId: string): Promise<KnowledgeBaseRecord[]>;
  /**
   * What a turn's bases are drawn from: those bound to the space, then those bound to the app,
   * then the default one (when `withDefault`), each group by creation, each base once. An
   * adapter answers it in one query (every turn asks); this is the same from the parts.
   */
  async turnCandidates(spaceId: string, appId: string | null, withDefault: boolean): Promise<KnowledgeBaseRecord[]> {
    const found = new Map<string, KnowledgeBaseRecord>();
    for (const kb of await this.boundTo('space', spaceId)) found.set(kb.id, kb);
    if (appId) for (const kb of await this.boundTo('app', appId)) if (!found.has(kb.id)) found.set(kb.id, kb);
    if (withDefault) for (const kb of await this.list()) if (kb.isDefault && !found.has(kb.id)) found.set(kb.id, kb);
    return [...found.values()];
  }
  abstract stats(kbId: string): Promise<KnowledgeStatsDto>;

  /** Adds a source, or updates the one at that path: a new content hash makes it `pending` again. */
  abstract upsertSource(source: NewSource): Promise<SourceRecord>;
  abstract listSources(kbId: string): Promise<SourceRecord[]>;
  abstract getSource(sourceId: string): Promise<SourceRecord | null>;
  /** Deletes the source at `relPath` with its chunks; null when there was none. */
  abstract deleteSource(kbId: string, relPath: string): Promise<SourceRecord | null>;
  /** `clear-relearn`: every source pending, every chunk gone, the generation bumped (answered). */
  abstract resetSources(kbId: string): Promise<number>;
  /**
   * Replaces a source's chunks and state with what ingesting `contentHash` produced, in one
   * transaction holding the source's row: nothing when the source is gone or its content changed
   * meanwhile (false). A second ingestion of the same content replaces, never doubles, the chunks.
   */
  abstract indexSource(sourceId: string, contentHash: string, outcome: IndexOutcome): Promise<boolean>;
  abstract markIngested(kbId: string): Promise<void>;
  /** Each learned source's first line of prose (at most 160 characters), by source id: for the document map. */
  abstract firstLines(kbId: string): Promise<Map<string, string>>;

  /** Chunks of the bases matching a `tsquery` literal, best first. */
  abstract keywordSearch(kbIds: string[], tsquery: string, limit: number): Promise<KeywordHit[]>;
  /**
   * The chunks of the bases nearest to a unit `vector` (cosine similarity, exact: every chunk
   * with a vector of that length is compared), best first; `score` is the similarity.
   */
  abstract vectorSearch(kbIds: string[], vector: number[], limit: number): Promise<KeywordHit[]>;

  abstract ingestStatus(kbId: string): Promise<IngestRecord | null>;
  /**
   * Starts a batch of these sources, or adds them to the running one (its total grows);
   * answers the status and the sources this call added (a job is queued for each of those
   * only). A source already waiting in the running batch is not added twice; one that finished
   * in it (say, failed) is added again and counted again.
   */
  abstract startBatch(
    kbId: string,
    batchId: string,
    sourceIds: string[],
    announce?: (status: IngestRecord) => Promise<void>,
  ): Promise<{ status: IngestRecord; added: string[] }>;
  abstract createLink(link: {
    id: string;
    kbId: string;
    spaceId: string;
    path: string;
    label: string | null;
  }): Promise<LinkRecord>;
  abstract getLink(linkId: string): Promise<LinkRecord | null>;
  abstract listLinks(filter: { kbId?: string; spaceId?: string }): Promise<LinkRecord[]>;
  abstract setLinkState(linkId: string, error: string | null): Promise<void>;
  abstract deleteLink(linkId: string): Promise<boolean>;
  /** The batches still running (their waiting sources), in every base: start-up recovery. */
  abstract runningBatches(): Promise<IngestRecord[]>;
  /**
   * Counts one source of the batch done (once, however often it is reported) and, holding the
   * status row, calls `announce` with the new status before letting go, so progress goes out in
   * the order it was counted across replicas. Null when the source was not waiting in that batch.
   */
  abstract finishItem(
    kbId: string,
    batchId: string,
    sourceId: string,
    current: string,
    error: { file: string; message: string } | null,
    announce: (status: IngestRecord) => Promise<void>,
  ): Promise<IngestRecord | null>;
}

/** The source files of knowledge bases, under `<data>/knowledge/<kbId>/raw/`. */
export abstract class KnowledgeFiles {
  /** Writes a source from chunks; more than `maxBytes` leaves nothing and answers 'too-large'. Answers the sha-256 and size. */
  abstract write(
    kbId: string,
    relPath: string,
    chunks: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<{ hash: string; size: number } | 'too-large'>;
  abstract read(kbId: string, relPath: string, maxBytes: number): Promise<Buffer | 'too-large' | null>;
  abstract remove(kbId: string, relPath: string): Promise<void>;
  abstract removeBase(kbId: string): Promise<void>;
}

/** A chunk as the parser prepares it: its text and its keyword lexemes (a `tsvector` literal). */
export interface PreparedChunk {
  heading: string | null;
  text: string;
  tsv: string;
}

/** Text extraction from a source's bytes (with limits against bombs; never throws for a bad file). */
export abstract class DocumentParser {
  /** Markdown-ish text (headings as `#` lines where the format has them), or why it failed. */
  abstract extract(name: string, bytes: Buffer): Promise<{ text: string } | { error: string }>;
  /**
   * The source's chunks, ready for the index (`prepareChunks` of its text), or why there are none.
   * Large or packed files are worked on away from the event loop within `budgetMs` (over it: an
   * error), so no single file stalls the server.
   */
  abstract prepare(
    name: string,
    bytes: Buffer,
    budgetMs: number,
  ): Promise<{ chunks: PreparedChunk[] } | { error: string }>;
}

/** The identity of an embedding model setting: vectors made under another key are not comparable. */
export function embeddingKey(e: KnowledgeEmbeddingDto): string {
  return `${e.modelSourceId}|${e.model}|${e.dimensions}`;
}

/** The provider has no embeddings endpoint, or answers vectors that do not fit the setting: not worth retrying. */
export class EmbeddingsUnavailable extends Error {}

/**
 * Vectors for texts from a model source's OpenAI-compatible `POST /embeddings` (docs/api/knowledge.md,
 * "Embeddings and hybrid search"). Batches to the provider's limits and retries transient failures;
 * throws `EmbeddingsUnavailable` when the provider cannot embed at all, another error otherwise.
 * The key is sent, never logged or put in an error.
 */
export abstract class Embeddings {
  abstract embed(endpoint: ModelEndpoint, model: string, dimensions: number, texts: string[]): Promise<number[][]>;
}
