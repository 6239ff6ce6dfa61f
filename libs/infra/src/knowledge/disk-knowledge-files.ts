import { createHash, randomUUID } from 'node:crypto';
import { open, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { KnowledgeFiles } from '#core/knowledge/knowledge.ports.js';

/**
 * The source files of knowledge bases under `<data>/knowledge/<kbId>/raw/` (the data folder is
 * shared by replicas, like spaces). Writes go to a temporary file renamed into place, so a
 * reader never sees half a file.
 */
export class DiskKnowledgeFiles extends KnowledgeFiles {
  constructor(private readonly dataDir: string) {
    super();
  }

  private base(kbId: string): string {
    if (!/^[0-9a-f-]{36}$/i.test(kbId)) throw new Error('invalid knowledge base id');
    return join(this.dataDir, 'knowledge', kbId);
  }

  /** The file of a source; `relPath` is already plain segments (the service checks), checked again here. */
  private file(kbId: string, relPath: string): string {
    const root = join(this.base(kbId), 'raw');
    const target = resolve(root, relPath);
    if (!target.startsWith(root + sep)) throw new Error('path outside the knowledge base');
    return target;
  }

  async write(kbId: string, relPath: string, chunks: AsyncIterable<Uint8Array>, maxBytes: number) {
    const target = this.file(kbId, relPath);
    await mkdir(dirname(target), { recursive: true });
    const temp = `${target}.${randomUUID()}.tmp`;
    const hash = createHash('sha256');
    let size = 0;
    const fh = await open(temp, 'w');
    let ok = false;
    try {
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > maxBytes) return 'too-large' as const;
        hash.update(chunk);
        await fh.write(chunk);
      }
      await fh.sync();
      ok = true;
    } finally {
      await fh.close();
      if (!ok) await rm(temp, { force: true });
    }
    await rename(temp, target);
    return { hash: hash.digest('hex'), size };
  }

  async read(kbId: string, relPath: string, maxBytes: number): Promise<Buffer | 'too-large' | null> {
    const target = this.file(kbId, relPath);
    const info = await stat(target).catch(() => null);
    if (!info?.isFile()) return null;
    if (info.size > maxBytes) return 'too-large';
    return readFile(target);
  }

  async remove(kbId: string, relPath: string): Promise<void> {
    await rm(this.file(kbId, relPath), { force: true });
  }

  async removeBase(kbId: string): Promise<void> {
    await rm(this.base(kbId), { recursive: true, force: true });
  }
}
