import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { Clock } from '#core/ports/clock.port.js';
import { FileStore } from '#core/ports/file-store.port.js';
import { NodeFileStore } from '#infra/files/node-file-store.js';

/**
 * The FileStore (and its path guard) alone, without controllers, for every context that
 * touches spaces' files: the file API, the file watcher, the agent's tools. The trash lives
 * in the data folder (docs/api.md, "Files on disk").
 */
@Module({
  providers: [
    {
      provide: FileStore,
      useFactory: (config: AppConfig, clock: Clock) =>
        new NodeFileStore({ trashDir: join(config.dataDir, 'trash'), now: () => new Date(clock.now()) }),
      inject: [APP_CONFIG, Clock],
    },
  ],
  exports: [FileStore],
})
export class FilesModule {}
