import { Injectable } from '@nestjs/common';
import { CatalogFetcher, CatalogFetchError, type CatalogResponse } from '../ports/catalog-fetcher.port.js';
import { Clock } from '../ports/clock.port.js';
import {
  type CachedIndex,
  type IndexLayout,
  type RegistrySource,
  StoreRepository,
} from '../ports/store.repository.port.js';
import { parseIndexDocuments, SINGLE_INDEX_FILE, SPLIT_INDEX_FILES, type ParsedIndex } from './catalog-index.js';
import { isPublicCatalog, PublicCatalogs } from './public-catalogs.js';
import { deepEqual } from './update-merge.js';

/** Largest index file read (a 10,000-entry catalog is about 6 MB). */
export const INDEX_MAX_BYTES = 32 * 1024 * 1024;

export type ReadMode = 'conditional' | 'full';

interface FileRead {
  file: string;
  doc: unknown;
  etag?: string;
  lastModified?: string;
}

/** Joins a source address and a relative path. */
export function sourceUrl(base: string, relative: string): string {
  return `${base.replace(/\/+$/, '')}/${relative.replace(/^\/+/, '')}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads a static catalog (protocol `svc`): the split index first, `index.json` when any split
 * file is missing or invalid; conditional requests with the stored validators; the result and
 * the validators kept in the database. Answers whether the entries changed.
 */
@Injectable()
export class CatalogReader {
  constructor(
    private readonly fetcher: CatalogFetcher,
    private readonly repo: StoreRepository,
    private readonly clock: Clock,
    private readonly publicCatalogs: PublicCatalogs,
  ) {}

  async read(source: RegistrySource, mode: ReadMode): Promise<boolean> {
    // Validators only: the entries (megabytes for a large catalog) are read when a new index came.
    const cached = mode === 'full' ? null : await this.repo.findIndex(source.id, false);
    try {
      // A public catalog is an API, not a static index: its adapter reads the listing in full.
      const result = isPublicCatalog(source.sourceType)
        ? { layout: null, parsed: await this.publicCatalogs.read(source), validators: {} }
        : await this.fetchIndex(source, cached);
      if (result === 'unchanged') {
        await this.repo.saveIndex(source.id, { ...this.keep(cached!), error: null, checkedAtMs: this.clock.now() });
        return false;
      }
      const previous = await this.repo.findIndex(source.id);
      const changed = !previous || !deepEqual(previous.entries, result.parsed.entries);
      await this.repo.saveIndex(source.id, {
        layout: result.layout,
        validators: result.validators,
        skipped: result.parsed.skipped,
        error: null,
        checkedAtMs: this.clock.now(),
        ...(changed || !previous ? { entries: result.parsed.entries } : {}),
      });
      return changed;
    } catch (err) {
      const before = cached ?? (await this.repo.findIndex(source.id, false));
      await this.repo.saveIndex(source.id, {
        ...(before ? this.keep(before) : { layout: null, validators: {}, skipped: 0, checkedAtMs: null }),
        error: errorText(err),
      });
      throw err;
    }
  }

  private keep(c: CachedIndex): Omit<CachedIndex, 'registryId' | 'revision' | 'entries' | 'error'> {
    return { layout: c.layout, validators: c.validators, skipped: c.skipped, checkedAtMs: c.checkedAtMs };
  }

  private async fetchIndex(
    source: RegistrySource,
    cached: CachedIndex | null,
  ): Promise<'unchanged' | { layout: IndexLayout; parsed: ParsedIndex; validators: CachedIndex['validators'] }> {
    const known = cached?.layout ? cached : null;
    if (known?.layout === 'single') {
      const single = await this.file(source, SINGLE_INDEX_FILE, known.validators[SINGLE_INDEX_FILE]);
      if (single === 'unchanged') return 'unchanged';
      if (single !== 'missing') return this.single(single);
      // index.json went away: the source may have moved to split files.
    }
    const split = await this.readSplit(source, known?.layout === 'split' ? known : null);
    if (split !== null) return split;
    const single = await this.file(source, SINGLE_INDEX_FILE, undefined);
    if (single === 'missing' || single === 'unchanged') {
      throw new CatalogFetchError(
        `${sourceUrl(source.url, SINGLE_INDEX_FILE)} is missing and the split index is incomplete`,
      );
    }
    return this.single(single);
  }

  private single(read: FileRead): { layout: IndexLayout; parsed: ParsedIndex; validators: CachedIndex['validators'] } {
    const parsed = parseIndexDocuments([read.doc]);
    if (!parsed) throw new CatalogFetchError(`${SINGLE_INDEX_FILE} is not an index (version 1 with an apps array)`);
    return { layout: 'single', parsed, validators: { [SINGLE_INDEX_FILE]: validatorsOf(read) } };
  }

  /** The three split files, or null when any is missing or invalid (then `index.json` is read). */
  private async readSplit(
    source: RegistrySource,
    known: CachedIndex | null,
  ): Promise<'unchanged' | { layout: IndexLayout; parsed: ParsedIndex; validators: CachedIndex['validators'] } | null> {
    const first = await Promise.all(SPLIT_INDEX_FILES.map((f) => this.file(source, f, known?.validators[f], true)));
    if (first.every((r) => r === 'unchanged')) return 'unchanged';
    if (first.some((r) => r === 'missing')) return null;
    // Some changed: the ones answered 304 are read again in full (their entries are not kept apart).
    const reads = await Promise.all(
      first.map((r, i) => (r === 'unchanged' ? this.file(source, SPLIT_INDEX_FILES[i]!, undefined, true) : r)),
    );
    if (reads.some((r) => r === 'missing' || r === 'unchanged')) return null;
    const files = reads as FileRead[];
    const parsed = parseIndexDocuments(files.map((r) => r.doc));
    if (!parsed) return null;
    return {
      layout: 'split',
      parsed,
      validators: Object.fromEntries(files.map((r) => [r.file, validatorsOf(r)])),
    };
  }

  /**
   * One index file: 'unchanged' on 304, 'missing' on 404 (and, for split files, on a body
   * that is not JSON), else the parsed document.
   */
  private async file(
    source: RegistrySource,
    file: string,
    validators: { etag?: string; lastModified?: string } | undefined,
    lenient = false,
  ): Promise<FileRead | 'unchanged' | 'missing'> {
    const response: CatalogResponse = await this.fetcher.fetch({
      url: sourceUrl(source.url, file),
      maxBytes: INDEX_MAX_BYTES,
      publicOnly: !source.isDefault,
      ...(validators?.etag ? { etag: validators.etag } : {}),
      ...(validators?.lastModified ? { lastModified: validators.lastModified } : {}),
    });
    if (response.status === 'not-modified') return validators ? 'unchanged' : 'missing';
    if (response.status === 'missing') return 'missing';
    let doc: unknown;
    try {
      doc = JSON.parse(new TextDecoder().decode(response.body));
    } catch {
      if (lenient) return 'missing';
      throw new CatalogFetchError(`${file} is not valid JSON`);
    }
    return {
      file,
      doc,
      ...(response.etag ? { etag: response.etag } : {}),
      ...(response.lastModified ? { lastModified: response.lastModified } : {}),
    };
  }
}

function validatorsOf(read: FileRead): { etag?: string; lastModified?: string } {
  return {
    ...(read.etag ? { etag: read.etag } : {}),
    ...(read.lastModified ? { lastModified: read.lastModified } : {}),
  };
}
