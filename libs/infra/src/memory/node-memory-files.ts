import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { DomainError } from '#core/errors/domain-error.js';
import type { GuardedPath } from '#core/ports/file-store.port.js';
import { type MemoryFilesStatus, MemoryFiles } from '#core/ports/memory-files.port.js';
import { SERVICE_FOLDER } from '#core/kernel/space.js';

interface StateFile {
  lastConsolidatedAt?: string;
  lastAttempt?: { at: string; outcome: string; reason?: string };
}

/**
 * Layout under the working folder: `.svc/memory.md` (the memory itself), `.svc/memory/topics/`
 * (topic pages written by consolidation) and `.svc/memory/.state.json` (consolidation record).
 */
export class NodeMemoryFiles extends MemoryFiles {
  async readStatus(workingFolder: string): Promise<MemoryFilesStatus> {
    const root = join(workingFolder, SERVICE_FOLDER);
    const main = await sizeOf(join(root, 'memory.md'));
    const topics = await topicSizes(join(root, 'memory', 'topics'));
    const state = await readState(join(root, 'memory', '.state.json'));
    return {
      exists: main !== null || topics.length > 0,
      totalBytes: (main ?? 0) + topics.reduce((a, b) => a + b, 0),
      topicCount: topics.length,
      lastConsolidatedAt: state.lastConsolidatedAt ?? null,
      lastAttempt: state.lastAttempt ?? null,
    };
  }

  async removeInternal(target: GuardedPath): Promise<void> {
    const memoryFolder = join(target.realRoot, SERVICE_FOLDER, 'memory');
    const rel = relative(memoryFolder, target.entry);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw DomainError.forbidden('Access denied');
    }
    // The entry itself: a symlink is removed, never followed.
    await rm(target.entry, { recursive: true, force: true });
  }
}

async function sizeOf(file: string): Promise<number | null> {
  try {
    const s = await stat(file);
    return s.isFile() ? s.size : null;
  } catch {
    return null;
  }
}

async function topicSizes(dir: string): Promise<number[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const sizes = await Promise.all(
      entries.filter((e) => e.isFile() && e.name.endsWith('.md')).map((e) => sizeOf(join(dir, e.name))),
    );
    return sizes.filter((s): s is number => s !== null);
  } catch {
    return [];
  }
}

async function readState(file: string): Promise<StateFile> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StateFile;
  } catch {
    return {};
  }
}
