import { Module } from '@nestjs/common';
import { CatalogReader } from '#core/store/catalog-reader.js';
import { PublicCatalogs } from '#core/store/public-catalogs.js';
import { PackagesService } from '#core/store/packages.service.js';
import { StoreCatalog } from '#core/store/store-catalog.js';
import { StoreServerClient } from '#core/store/store-server.js';
import { StoreService } from '#core/store/store.service.js';
import { AppsModule } from './apps.module.js';
import { SkillsModule } from './skills.module.js';

/** The Store (sources, catalogs, install, updates) and packages; installs go through AppsService. */
@Module({
  imports: [AppsModule, SkillsModule],
  providers: [CatalogReader, PublicCatalogs, StoreCatalog, StoreServerClient, StoreService, PackagesService],
  exports: [StoreService, PackagesService],
})
export class StoreModule {}
