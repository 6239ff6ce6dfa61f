import { Inject, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { ConversationsService } from '#core/conversations/conversations.service.js';
import { ConversationCleanup } from '#core/ports/conversation-cleanup.port.js';
import { conversationRepositoryProvider } from '#infra/conversations/conversation-repository.provider.js';
import { AppLogger } from '#infra/logging/logger.js';
import { ConversationsController } from './conversations.controller.js';

/**
 * Conversation records. Exports ConversationsService (the agent engine's record keeper) and
 * ConversationCleanup (deleting a space). Imports no SpacesModule — SpacesModule imports this
 * one — and checks spaces through the global SpaceRepository port instead.
 */
@Module({
  controllers: [ConversationsController],
  providers: [
    conversationRepositoryProvider,
    ConversationsService,
    { provide: ConversationCleanup, useExisting: ConversationsService },
  ],
  exports: [ConversationsService, ConversationCleanup],
})
export class ConversationsModule implements OnApplicationBootstrap {
  constructor(
    private readonly conversations: ConversationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: AppLogger,
  ) {}

  /**
   * Ephemeral conversations are deleted at the next start. With REDIS_URL (several replicas)
   * only those idle for an hour, so one replica's restart keeps the others' live ones.
   */
  async onApplicationBootstrap(): Promise<void> {
    const replicated = this.config.redisUrl !== null;
    const removed = await this.conversations.sweepEphemeral(replicated);
    if (removed > 0) this.logger.info('ephemeral conversations deleted', { count: removed, replicated });
  }
}
