import { Module } from '@nestjs/common';
import { ArtifactsService } from '#core/artifacts/artifacts.service.js';
import { SpacesModule } from './spaces.module.js';

/** Files of spaces (the file API's service); the FileStore and its path guard are bound by InfraModule. */
@Module({
  imports: [SpacesModule],
  providers: [ArtifactsService],
  exports: [ArtifactsService],
})
export class ArtifactsModule {}
