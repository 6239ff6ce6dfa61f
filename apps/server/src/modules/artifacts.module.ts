import { Module } from '@nestjs/common';
import { ArtifactsService } from '#core/artifacts/artifacts.service.js';
import { TrashService } from '#core/artifacts/trash.service.js';
import { SpacesModule } from './spaces.module.js';

/** Files of spaces (the file API's service) and their trash; the FileStore, its path guard and the TrashBin are bound by InfraModule. */
@Module({
  imports: [SpacesModule],
  providers: [ArtifactsService, TrashService],
  exports: [ArtifactsService, TrashService],
})
export class ArtifactsModule {}
