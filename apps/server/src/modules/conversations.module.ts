import { Module, type OnApplicationBootstrap } from '@nestjs/common';
import { ConversationsService } from '#core/conversations/conversations.service.js';
import { ConversationCleanup } from '#core/ports/conversation-cleanup.port.js';
import { Replica } from '#core/ports/replica.port.js';
import { AppLogger } from '#infra/logging/logger.js';

/**
 * Conversation records. Exports ConversationsService (the agent engine's record keeper) and
 * ConversationCleanup (deleting a space). Imports no SpacesModule — SpacesModule imports this
 * one — and checks spaces through the global SpaceRepository port instead.
 */
@Module({
  providers: [ConversationsService, { provide: ConversationCleanup, useExisting: ConversationsService }],
  exports: [ConversationsService, ConversationCleanup],
})
export class ConversationsModule implements OnApplicationBootstrap {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly replica: Replica,
    private readonly logger: AppLogger,
  ) {}

  /**
   * Ephemeral conversations are deleted at the next start. Beside other replicas only those
   * idle for an hour, so one replica's restart keeps the others' live ones.
   */
  async onApplicationBootstrap(): Promise<void> {
    const replicated = this.replica.shared;
    const removed = await this.conversations.sweepEphemeral(replicated);
    if (removed > 0) this.logger.info('ephemeral conversations deleted', { count: removed, replicated });
  }
}
