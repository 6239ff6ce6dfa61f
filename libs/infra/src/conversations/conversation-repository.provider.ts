import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConversationRepository } from '#core/ports/conversation.repository.port.js';
import { TypeormConversationRepository } from './typeorm-conversation.repository.js';

/** Binds the ConversationRepository port to its TypeORM adapter on the shared DataSource. */
export const conversationRepositoryProvider: Provider = {
  provide: ConversationRepository,
  useFactory: (ds: DataSource) => new TypeormConversationRepository(ds),
  inject: [DataSource],
};
