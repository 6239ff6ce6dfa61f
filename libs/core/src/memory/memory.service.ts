import { Injectable } from '@nestjs/common';
import type { MemoryState } from '#contracts/spaces.js';
import { ConsolidationStatus, MemoryFiles } from '../ports/memory-files.port.js';
import { SpacesService } from '../spaces/spaces.service.js';

/** Workspace memory as the API reports it. Consolidation itself comes with the agent engine. */
@Injectable()
export class MemoryService {
  constructor(
    private readonly spaces: SpacesService,
    private readonly files: MemoryFiles,
    private readonly consolidation: ConsolidationStatus,
  ) {}

  async state(spaceId: string): Promise<MemoryState> {
    const space = await this.spaces.get(spaceId);
    const [status, consolidating] = await Promise.all([
      this.files.readStatus(space.path),
      this.consolidation.isConsolidating(spaceId),
    ]);
    return { ...status, consolidating };
  }
}
