import type { DataSource } from 'typeorm';
import type { StoreEntry } from '#contracts/store.js';
import {
  type BundledSkill,
  type CachedIndex,
  DUPLICATE_URL,
  type IndexLayout,
  type IndexState,
  type RegistrySource,
  type StoreInstall,
  StoreRepository,
} from '#core/ports/store.repository.port.js';
import { StoreIndexEntity, StoreInstallEntity, StoreSourceEntity } from '../database/entities/store.entity.js';
import { returningRows } from '../database/returning-rows.js';

const toSource = (r: StoreSourceEntity): RegistrySource => ({
  id: r.id,
  name: r.name,
  url: r.url,
  enabled: r.enabled,
  isDefault: r.isDefault,
  sourceType: r.sourceType,
  adapterConfig: r.adapterConfig,
});

const msOf = (v: string | null): number | null => (v === null ? null : Number(v));

/** Store records in Postgres (or the embedded PGlite): sources, cached catalogs, install records. */
export class TypeormStoreRepository extends StoreRepository {
  constructor(private readonly ds: DataSource) {
    super();
  }

  private get sources() {
    return this.ds.getRepository(StoreSourceEntity);
  }

  async listSources(): Promise<RegistrySource[]> {
    const rows = await this.sources.find({ order: { isDefault: 'DESC', createdAt: 'ASC', id: 'ASC' } });
    return rows.map(toSource);
  }

  async findSource(id: string): Promise<RegistrySource | null> {
    const row = await this.sources.findOneBy({ id });
    return row ? toSource(row) : null;
  }

  async addSource(source: RegistrySource): Promise<RegistrySource | typeof DUPLICATE_URL> {
    const rows: unknown = await this.ds.query(
      `INSERT INTO "store_source" ("id", "name", "url", "enabled", "is_default", "source_type", "adapter_config")
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT ("url") DO NOTHING RETURNING "id"`,
      [
        source.id,
        source.name,
        source.url,
        source.enabled,
        source.isDefault,
        source.sourceType,
        source.adapterConfig === null ? null : JSON.stringify(source.adapterConfig),
      ],
    );
    return returningRows(rows).length > 0 ? source : DUPLICATE_URL;
  }

  async updateSource(
    id: string,
    changes: Partial<Pick<RegistrySource, 'enabled' | 'adapterConfig'>>,
  ): Promise<boolean> {
    const result = await this.sources.update({ id }, changes as never);
    return (result.affected ?? 0) > 0;
  }

  async deleteSource(id: string): Promise<boolean> {
    await this.ds.getRepository(StoreIndexEntity).delete({ registryId: id });
    const result = await this.sources.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  async syncBuiltins(builtins: RegistrySource[]): Promise<void> {
    await this.ds.transaction(async (m) => {
      const ids = builtins.map((b) => b.id);
      const stale = (await m.getRepository(StoreSourceEntity).findBy({ isDefault: true })).filter(
        (r) => !ids.includes(r.id),
      );
      for (const row of stale) {
        await m.getRepository(StoreIndexEntity).delete({ registryId: row.id });
        await m.getRepository(StoreSourceEntity).delete({ id: row.id });
      }
      for (const b of builtins) {
        // A user source with the same URL gives way to the built-in one.
        await m.query(`DELETE FROM "store_source" WHERE "url" = $1 AND "id" <> $2`, [b.url, b.id]);
        await m.query(
          `INSERT INTO "store_source" ("id", "name", "url", "enabled", "is_default", "source_type")
           VALUES ($1, $2, $3, $5, true, $4)
           ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name", "url" = EXCLUDED."url",
             "source_type" = EXCLUDED."source_type"`,
          [b.id, b.name, b.url, b.sourceType, b.enabled],
        );
      }
    });
  }

  async indexStates(): Promise<Map<string, IndexState>> {
    const rows = await this.ds.getRepository(StoreIndexEntity).find({
      select: { registryId: true, revision: true, error: true, skipped: true, checkedAtMs: true },
    });
    return new Map(
      rows.map((r) => [
        r.registryId,
        { revision: r.revision, error: r.error, skipped: r.skipped, checkedAtMs: msOf(r.checkedAtMs) },
      ]),
    );
  }

  async findIndex(registryId: string, withEntries = true): Promise<CachedIndex | null> {
    const r = await this.ds.getRepository(StoreIndexEntity).findOne({
      where: { registryId },
      ...(withEntries
        ? {}
        : {
            select: {
              registryId: true,
              revision: true,
              layout: true,
              validators: true,
              skipped: true,
              error: true,
              checkedAtMs: true,
            },
          }),
    });
    if (!r) return null;
    return {
      registryId: r.registryId,
      revision: r.revision,
      layout: r.layout as IndexLayout | null,
      validators: r.validators,
      entries: (r.entries ?? []) as StoreEntry[],
      skipped: r.skipped,
      error: r.error,
      checkedAtMs: msOf(r.checkedAtMs),
    };
  }

  async saveIndex(
    registryId: string,
    read: Omit<CachedIndex, 'registryId' | 'revision' | 'entries'> & { entries?: StoreEntry[] },
  ): Promise<void> {
    const params = [
      registryId,
      read.layout,
      JSON.stringify(read.validators),
      read.entries === undefined ? null : JSON.stringify(read.entries),
      read.skipped,
      read.error,
      read.checkedAtMs,
    ];
    await this.ds.query(
      `INSERT INTO "store_index" ("registry_id", "revision", "layout", "validators", "entries", "skipped", "error", "checked_at_ms")
       VALUES ($1, 1, $2, $3, COALESCE($4::jsonb, '[]'::jsonb), $5, $6, $7)
       ON CONFLICT ("registry_id") DO UPDATE SET
         "revision" = "store_index"."revision" + (CASE WHEN $4::jsonb IS NULL THEN 0 ELSE 1 END),
         "layout" = EXCLUDED."layout", "validators" = EXCLUDED."validators",
         "entries" = COALESCE($4::jsonb, "store_index"."entries"),
         "skipped" = EXCLUDED."skipped", "error" = EXCLUDED."error", "checked_at_ms" = EXCLUDED."checked_at_ms"`,
      params,
    );
  }

  async clearIndex(registryId: string): Promise<void> {
    await this.ds.getRepository(StoreIndexEntity).delete({ registryId });
  }

  async saveInstall(install: StoreInstall): Promise<void> {
    await this.ds.getRepository(StoreInstallEntity).upsert(
      {
        // jsonb columns: TypeORM's deep-partial typing cannot describe free-form objects.
        appId: install.appId,
        registryId: install.registryId,
        slug: install.slug,
        authorSpec: install.authorSpec as never,
        skills: install.skills,
        ignoredVersions: install.ignoredVersions,
      },
      ['appId'],
    );
  }

  async findInstall(appId: string): Promise<StoreInstall | null> {
    const r = await this.ds.getRepository(StoreInstallEntity).findOneBy({ appId });
    return r ? toInstall(r) : null;
  }

  async listInstalls(): Promise<StoreInstall[]> {
    return (await this.ds.getRepository(StoreInstallEntity).find()).map(toInstall);
  }
}

function toInstall(r: StoreInstallEntity): StoreInstall {
  return {
    appId: r.appId,
    registryId: r.registryId,
    slug: r.slug,
    authorSpec: r.authorSpec,
    skills: r.skills as BundledSkill[],
    ignoredVersions: r.ignoredVersions,
  };
}
