import { DomainError } from '../errors/domain-error.js';
import type { FileStore, GuardedPath } from '../ports/file-store.port.js';
import type { MemoryFiles } from '../ports/memory-files.port.js';
import { SERVICE_FOLDER } from '../kernel/space.js';
import { type ConsolidationPlan, MEMORY_FILE, type MemoryContent, TOPICS_FOLDER } from './consolidation-format.js';
import { nextSnapshotName, snapshotsToPrune } from './snapshot-rules.js';

/** Largest memory file read for consolidation; memory beyond this is not sent to a model. */
export const MEMORY_READ_MAX_BYTES = 4 * 1024 * 1024;

/** `.svc/memory/.state.json`: the consolidation record. Unknown fields are kept. */
export interface MemoryStateRecord {
  lastConsolidatedAt?: string;
  lastAttempt?: { at: string; outcome: 'committed' | 'failed'; reason?: string };
  [field: string]: unknown;
}

export class MemoryTooLarge extends Error {
  constructor(readonly file: string) {
    super(`${file} is larger than ${MEMORY_READ_MAX_BYTES} bytes`);
  }
}

const MEMORY_PATH = `${SERVICE_FOLDER}/${MEMORY_FILE}`;
const MEMORY_FOLDER = `${SERVICE_FOLDER}/memory`;
const TOPICS_PATH = `${MEMORY_FOLDER}/${TOPICS_FOLDER}`;
const SNAPSHOTS_PATH = `${MEMORY_FOLDER}/.snapshots`;
const STATE_PATH = `${MEMORY_FOLDER}/.state.json`;

/**
 * The memory files of one space, read and written through the FileStore: every path goes
 * through the path guard with the space's working folder as the only root, and every write
 * is atomic (temporary file, flush, rename). Layout: `.svc/memory.md`, `.svc/memory/topics/`,
 * `.svc/memory/.snapshots/<name>/`, `.svc/memory/.state.json`.
 */
export class MemoryStore {
  constructor(
    private readonly files: FileStore,
    private readonly memoryFiles: MemoryFiles,
    private readonly workingFolder: string,
  ) {}

  private guard(relativePath: string): Promise<GuardedPath> {
    return this.files.resolve({ roots: [this.workingFolder], base: this.workingFolder, path: relativePath });
  }

  /** memory.md and every topic page; missing ones are absent, oversized ones throw MemoryTooLarge. */
  async read(): Promise<MemoryContent> {
    const memory = await this.readText(MEMORY_PATH);
    const topics = new Map<string, string>();
    for (const name of await this.topicNames()) {
      const text = await this.readText(`${TOPICS_PATH}/${name}.md`);
      if (text !== null) topics.set(name, text);
    }
    return { memory, topics };
  }

  /** Sizes for the cadence rules, without reading the contents. */
  async sizes(): Promise<{ memoryBytes: number; totalBytes: number }> {
    const main = await this.files.stat(await this.guard(MEMORY_PATH));
    const memoryBytes = main?.kind === 'file' ? main.size : 0;
    let totalBytes = memoryBytes;
    const topics = await this.list(TOPICS_PATH);
    for (const e of topics) if (e.kind === 'file' && e.name.endsWith('.md')) totalBytes += e.size;
    return { memoryBytes, totalBytes };
  }

  /** Empty: memory.md missing or blank, and no topic page. */
  async isEmpty(): Promise<boolean> {
    if ((await this.topicNames()).length > 0) return false;
    const main = await this.files.stat(await this.guard(MEMORY_PATH));
    if (main?.kind !== 'file') return true;
    if (main.size > MEMORY_READ_MAX_BYTES) return false;
    const text = await this.readText(MEMORY_PATH);
    return text === null || text.trim() === '';
  }

  async readState(): Promise<MemoryStateRecord> {
    try {
      const text = await this.readText(STATE_PATH);
      const parsed: unknown = text === null ? {} : JSON.parse(text);
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as MemoryStateRecord) : {};
    } catch {
      return {};
    }
  }

  async writeState(state: MemoryStateRecord): Promise<void> {
    await this.ensureFolders(MEMORY_FOLDER);
    await this.files.writeAtomic(await this.guard(STATE_PATH), `${JSON.stringify(state, null, 2)}\n`);
  }

  /**
   * Copies the memory into `.snapshots/<name>/` (memory.md and topics/) and prunes old
   * snapshots, keeping `initial` and the newest ones. Returns the snapshot's name.
   */
  async snapshot(content: MemoryContent, now: Date): Promise<string> {
    await this.ensureFolders(SNAPSHOTS_PATH);
    const existing = (await this.list(SNAPSHOTS_PATH)).filter((e) => e.kind === 'folder').map((e) => e.name);
    const name = nextSnapshotName(existing, now);
    const folder = `${SNAPSHOTS_PATH}/${name}`;
    await this.files.makeFolder(await this.guard(folder));
    if (content.memory !== null)
      await this.files.writeAtomic(await this.guard(`${folder}/${MEMORY_FILE}`), content.memory);
    if (content.topics.size > 0) {
      await this.files.makeFolder(await this.guard(`${folder}/${TOPICS_FOLDER}`));
      for (const [topic, text] of content.topics) {
        await this.files.writeAtomic(await this.guard(`${folder}/${TOPICS_FOLDER}/${topic}.md`), text);
      }
    }
    for (const old of snapshotsToPrune([...existing, name])) {
      await this.memoryFiles.removeInternal(await this.guard(`${SNAPSHOTS_PATH}/${old}`));
    }
    return name;
  }

  /** Writes a plan: stale topic pages go first, then the new pages, memory.md last. */
  async apply(plan: ConsolidationPlan): Promise<void> {
    for (const name of plan.remove)
      await this.memoryFiles.removeInternal(await this.guard(`${TOPICS_PATH}/${name}.md`));
    if (plan.write.size > 0) await this.ensureFolders(TOPICS_PATH);
    for (const [slug, text] of plan.write)
      await this.files.writeAtomic(await this.guard(`${TOPICS_PATH}/${slug}.md`), text);
    await this.files.writeAtomic(await this.guard(MEMORY_PATH), plan.memory);
  }

  /** Puts back the memory as it was (after a failed apply): its pages and memory.md, nothing else. */
  async restore(content: MemoryContent): Promise<void> {
    for (const name of await this.topicNames()) {
      if (!content.topics.has(name))
        await this.memoryFiles.removeInternal(await this.guard(`${TOPICS_PATH}/${name}.md`));
    }
    if (content.topics.size > 0) await this.ensureFolders(TOPICS_PATH);
    for (const [name, text] of content.topics)
      await this.files.writeAtomic(await this.guard(`${TOPICS_PATH}/${name}.md`), text);
    if (content.memory !== null) await this.files.writeAtomic(await this.guard(MEMORY_PATH), content.memory);
  }

  /** Names (without `.md`) of the topic pages. */
  private async topicNames(): Promise<string[]> {
    return (await this.list(TOPICS_PATH))
      .filter((e) => e.kind === 'file' && e.name.endsWith('.md') && e.name.length > 3)
      .map((e) => e.name.slice(0, -3))
      .sort();
  }

  private async list(relativePath: string): Promise<Array<{ name: string; kind: 'file' | 'folder'; size: number }>> {
    const folder = await this.guard(relativePath);
    const info = await this.files.stat(folder);
    if (info?.kind !== 'folder') return [];
    return this.files.readDir(folder);
  }

  private async readText(relativePath: string): Promise<string | null> {
    const target = await this.guard(relativePath);
    const info = await this.files.stat(target);
    if (info?.kind !== 'file') return null;
    let data: Buffer | 'too-large';
    try {
      data = await this.files.readFile(target, MEMORY_READ_MAX_BYTES);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found') return null; // gone meanwhile
      throw err;
    }
    if (data === 'too-large') throw new MemoryTooLarge(relativePath);
    return data.toString('utf8');
  }

  /** Creates each missing folder of a relative path, one level at a time. */
  private async ensureFolders(relativePath: string): Promise<void> {
    const parts = relativePath.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const folder = await this.guard(parts.slice(0, i).join('/'));
      const info = await this.files.stat(folder);
      if (info?.kind === 'folder') continue;
      await this.files.makeFolder(folder);
    }
  }
}
