import { Module } from '@nestjs/common';
import { ArtifactsService } from '#core/artifacts/artifacts.service.js';
import { SpacesModule } from '../spaces/spaces.module.js';
import { ArtifactsController } from './artifacts.controller.js';
import { FilesModule } from './files.module.js';
import { SpaceArtifactsController } from './space-artifacts.controller.js';

/**
 * Files of spaces over HTTP. Exports ArtifactsService and, through FilesModule, the
 * FileStore with its path guard (contexts that need only the FileStore can import
 * FilesModule and skip these controllers).
 */
@Module({
  imports: [SpacesModule, FilesModule],
  controllers: [ArtifactsController, SpaceArtifactsController],
  providers: [ArtifactsService],
  exports: [ArtifactsService, FilesModule],
})
export class ArtifactsModule {}
