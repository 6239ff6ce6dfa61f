import { createHash } from 'node:crypto';
import type { KnowledgeStatsDto } from '#contracts/knowledge.js';
import type { ModelEndpoint } from '#core/ports/model-provider.port.js';
import {
  Embeddings,
  EmbeddingsUnavailable,
  type IngestRecord,
  type IndexOutcome,
  type KeywordHit,
  type KnowledgeBaseChanges,
  type KnowledgeBaseRecord,
  KnowledgeFiles,
  KnowledgeRepository,
  type LinkRecord,
  type NewSource,
  type SourceRecord,
} from '#core/knowledge/knowledge.ports.js';

const notFaked = (what: string): never => {
  throw new Error(`FakeKnowledgeRepository.${what} is not faked yet: add it when a test needs it`);
};

/**
 * Knowledge bases, bindings and sources in memory, honouring the port's rules (one default,
 * a new content hash makes a source pending again, deleting a base drops its bindings and
 * sources). Search answers the hits a test sets (`keywordHits`, `vectorHits`) and records the
 * calls. Batches and linked folders are not faked yet.
 */
export class FakeKnowledgeRepository extends KnowledgeRepository {
  readonly bases = new Map<string, KnowledgeBaseRecord>();
  readonly sources = new Map<string, SourceRecord>();
  /** What a keyword (or vector) search answers, by the call's base ids; the calls made. */
  keywordHits: KeywordHit[] = [];
  vectorHits: KeywordHit[] = [];
  readonly searches: Array<{ kind: 'keyword' | 'vector'; kbIds: string[]; limit: number }> = [];
  private tick = 0;
  private nextSource = 0;

  constructor(private readonly now: () => number = () => Date.parse('2026-03-01T10:00:00Z')) {
    super();
  }

  async create(input: {
    id: string;
    name: string;
    icon: string | null;
    description: string | null;
  }): Promise<KnowledgeBaseRecord> {
    const at = this.stamp();
    const record: KnowledgeBaseRecord = {
      ...input,
      status: 'active',
      isDefault: false,
      embedding: null,
      embeddingError: null,
      generation: 0,
      lastIngestAt: null,
      createdAt: at,
      updatedAt: at,
      spaceIds: [],
      appIds: [],
    };
    this.bases.set(input.id, record);
    return structuredClone(record);
  }

  async list(): Promise<KnowledgeBaseRecord[]> {
    return [...this.bases.values()].map((kb) => structuredClone(kb));
  }

  async get(kbId: string): Promise<KnowledgeBaseRecord | null> {
    const kb = this.bases.get(kbId);
    return kb ? structuredClone(kb) : null;
  }

  async update(kbId: string, changes: KnowledgeBaseChanges): Promise<KnowledgeBaseRecord | null> {
    const kb = this.bases.get(kbId);
    if (!kb) return null;
    Object.assign(kb, changes, { updatedAt: this.stamp() });
    return structuredClone(kb);
  }

  async delete(kbId: string): Promise<boolean> {
    for (const [id, source] of this.sources) if (source.kbId === kbId) this.sources.delete(id);
    return this.bases.delete(kbId);
  }

  async setDefault(kbId: string | null): Promise<void> {
    for (const kb of this.bases.values()) kb.isDefault = kb.id === kbId;
  }

  async bind(kbId: string, kind: 'space' | 'app', targetId: string): Promise<void> {
    const kb = this.bases.get(kbId);
    const list = kind === 'space' ? kb?.spaceIds : kb?.appIds;
    if (list && !list.includes(targetId)) list.push(targetId);
  }

  async unbind(kbId: string, kind: 'space' | 'app', targetId: string): Promise<void> {
    const kb = this.bases.get(kbId);
    if (!kb) return;
    if (kind === 'space') kb.spaceIds = kb.spaceIds.filter((id) => id !== targetId);
    else kb.appIds = kb.appIds.filter((id) => id !== targetId);
  }

  async boundTo(kind: 'space' | 'app', targetId: string): Promise<KnowledgeBaseRecord[]> {
    return (await this.list()).filter((kb) => (kind === 'space' ? kb.spaceIds : kb.appIds).includes(targetId));
  }

  async stats(kbId: string): Promise<KnowledgeStatsDto> {
    const sources = [...this.sources.values()].filter((s) => s.kbId === kbId);
    return {
      rawFileCount: sources.length,
      indexedCount: sources.filter((s) => s.state === 'learned').length,
      chunkCount: 0,
      rawSizeBytes: sources.reduce((sum, s) => sum + s.size, 0),
    };
  }

  async upsertSource(source: NewSource): Promise<SourceRecord> {
    const existing = [...this.sources.values()].find((s) => s.kbId === source.kbId && s.relPath === source.relPath);
    if (existing) {
      if (existing.contentHash !== source.contentHash) Object.assign(existing, { state: 'pending', error: null });
      Object.assign(existing, { size: source.size, contentHash: source.contentHash, name: source.name });
      return structuredClone(existing);
    }
    const record: SourceRecord = {
      ...source,
      id: `source-${++this.nextSource}`,
      indexedHash: null,
      state: 'pending',
      error: null,
      embeddingKey: null,
    };
    this.sources.set(record.id, record);
    return structuredClone(record);
  }

  async listSources(kbId: string): Promise<SourceRecord[]> {
    return [...this.sources.values()].filter((s) => s.kbId === kbId).map((s) => structuredClone(s));
  }

  async getSource(sourceId: string): Promise<SourceRecord | null> {
    const source = this.sources.get(sourceId);
    return source ? structuredClone(source) : null;
  }

  async deleteSource(kbId: string, relPath: string): Promise<SourceRecord | null> {
    const source = [...this.sources.values()].find((s) => s.kbId === kbId && s.relPath === relPath);
    if (!source) return null;
    this.sources.delete(source.id);
    return source;
  }

  async resetSources(kbId: string): Promise<number> {
    const kb = this.bases.get(kbId);
    if (kb) kb.generation += 1;
    for (const source of this.sources.values()) {
      if (source.kbId === kbId) Object.assign(source, { state: 'pending', indexedHash: null, embeddingKey: null });
    }
    return kb?.generation ?? 0;
  }

  async indexSource(_sourceId: string, _contentHash: string, _outcome: IndexOutcome): Promise<boolean> {
    return notFaked('indexSource');
  }

  async markIngested(kbId: string): Promise<void> {
    const kb = this.bases.get(kbId);
    if (kb) kb.lastIngestAt = this.stamp();
  }

  async firstLines(): Promise<Map<string, string>> {
    return new Map();
  }

  async keywordSearch(kbIds: string[], _tsquery: string, limit: number): Promise<KeywordHit[]> {
    this.searches.push({ kind: 'keyword', kbIds, limit });
    return this.keywordHits.filter((h) => kbIds.includes(h.kbId)).slice(0, limit);
  }

  async vectorSearch(kbIds: string[], _vector: number[], limit: number): Promise<KeywordHit[]> {
    this.searches.push({ kind: 'vector', kbIds, limit });
    return this.vectorHits.filter((h) => kbIds.includes(h.kbId)).slice(0, limit);
  }

  async ingestStatus(): Promise<IngestRecord | null> {
    return null;
  }

  async startBatch(): Promise<{ status: IngestRecord; added: string[] }> {
    return notFaked('startBatch');
  }

  async createLink(): Promise<LinkRecord> {
    return notFaked('createLink');
  }

  async getLink(): Promise<LinkRecord | null> {
    return null;
  }

  async listLinks(): Promise<LinkRecord[]> {
    return [];
  }

  async setLinkState(): Promise<void> {
    notFaked('setLinkState');
  }

  async deleteLink(): Promise<boolean> {
    return false;
  }

  async runningBatches(): Promise<IngestRecord[]> {
    return [];
  }

  async finishItem(): Promise<IngestRecord | null> {
    return notFaked('finishItem');
  }

  private stamp(): string {
    return new Date(this.now() + this.tick++).toISOString();
  }
}

/**
 * Embeddings answered by a function of the text (default: a two-dimensional vector from its
 * length); `unavailable` makes every call throw EmbeddingsUnavailable with that reason, as a
 * provider without an embeddings endpoint does. Records every call.
 */
export class FakeEmbeddings extends Embeddings {
  readonly calls: Array<{ model: string; dimensions: number; texts: string[] }> = [];
  unavailable: string | null = null;

  constructor(private readonly vectorOf: (text: string) => number[] = (text) => [text.length, 1]) {
    super();
  }

  async embed(_endpoint: ModelEndpoint, model: string, dimensions: number, texts: string[]): Promise<number[][]> {
    this.calls.push({ model, dimensions, texts });
    if (this.unavailable !== null) throw new EmbeddingsUnavailable(this.unavailable);
    return texts.map(this.vectorOf);
  }
}

/** Source files of knowledge bases in memory, by base and path. */
export class FakeKnowledgeFiles extends KnowledgeFiles {
  readonly files = new Map<string, Buffer>();
  readonly removedBases: string[] = [];

  async write(
    kbId: string,
    relPath: string,
    chunks: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<{ hash: string; size: number } | 'too-large'> {
    const parts: Buffer[] = [];
    for await (const chunk of chunks) parts.push(Buffer.from(chunk));
    const data = Buffer.concat(parts);
    if (data.length > maxBytes) return 'too-large';
    this.files.set(`${kbId}/${relPath}`, data);
    return { hash: createHash('sha256').update(data).digest('hex'), size: data.length };
  }

  async read(kbId: string, relPath: string, maxBytes: number): Promise<Buffer | 'too-large' | null> {
    const data = this.files.get(`${kbId}/${relPath}`);
    if (!data) return null;
    return data.length > maxBytes ? 'too-large' : data;
  }

  async remove(kbId: string, relPath: string): Promise<void> {
    this.files.delete(`${kbId}/${relPath}`);
  }

  async removeBase(kbId: string): Promise<void> {
    this.removedBases.push(kbId);
    for (const key of [...this.files.keys()]) if (key.startsWith(`${kbId}/`)) this.files.delete(key);
  }
}
