import type { ConversationDto, ConversationSummaryDto, MessageDto } from '#contracts/conversations.js';
import type { Conversation, ConversationWithMessages, Message } from '#core/kernel/conversation.js';
import { RESERVED_MESSAGE_FIELDS } from '#core/conversations/conversation-rules.js';

/** Domain records → wire shapes (ISO dates; optional fields left out when unset). */

export function toSummaryDto(c: Conversation): ConversationSummaryDto {
  const dto: ConversationSummaryDto = {
    id: c.id,
    spaceId: c.spaceId,
    title: c.title,
    starred: c.starred,
    ephemeral: c.ephemeral,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
    messageCount: c.messageCount,
  };
  if (c.reasoningEffort !== null) dto.reasoningEffort = c.reasoningEffort;
  if (c.modelSourceId !== null && c.modelId !== null) {
    dto.modelSourceId = c.modelSourceId;
    dto.modelId = c.modelId;
  }
  return dto;
}

export function toMessageDto(m: Message): MessageDto {
  const dto: MessageDto = { id: m.id, role: m.role, content: m.content, createdAt: m.createdAt.toISOString() };
  for (const [key, value] of Object.entries(m.meta)) {
    if (!RESERVED_MESSAGE_FIELDS.includes(key)) dto[key] = value;
  }
  return dto;
}

/** `messagesFrom` echoes `from` whenever it was used, found or not (then `messages` is the whole list). */
export function toConversationDto(found: ConversationWithMessages, from?: string): ConversationDto {
  const dto: ConversationDto = { ...toSummaryDto(found.conversation), messages: found.messages.map(toMessageDto) };
  if (from !== undefined) dto.messagesFrom = from;
  return dto;
}
