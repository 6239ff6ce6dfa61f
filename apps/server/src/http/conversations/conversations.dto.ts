import { IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import {
  CONVERSATION_TITLE_MAX,
  MESSAGE_ROLES,
  type MessageRole,
  REASONING_EFFORTS,
  type ReasoningEffort,
} from '#contracts/conversations.js';
import { Documented, QueryDto } from '../common/validation.js';

/** Request bodies of "Conversation records". Core re-checks the rules (the engine calls it directly). */

export class CreateConversationDto {
  @IsOptional()
  @IsString()
  @MaxLength(CONVERSATION_TITLE_MAX)
  title?: string;

  @IsOptional()
  @IsIn(REASONING_EFFORTS)
  reasoningEffort?: ReasoningEffort;

  @IsOptional()
  @IsBoolean()
  ephemeral?: boolean;
}

/** null for both pin fields (or for reasoningEffort) clears them. */
export class UpdateConversationDto {
  @IsOptional()
  @IsString()
  @MaxLength(CONVERSATION_TITLE_MAX)
  title?: string;

  @IsOptional()
  @IsUUID('all')
  modelSourceId?: string | null;

  @IsOptional()
  @IsString()
  modelId?: string | null;

  @IsOptional()
  @IsIn(REASONING_EFFORTS)
  reasoningEffort?: ReasoningEffort | null;
}

export class StarConversationDto {
  @IsBoolean()
  starred: boolean;
}

/** Optional facts recorded with a message; they come back as fields of the message. */
class MessageFactsDto {
  @IsOptional()
  @IsArray()
  images?: unknown[] | null;

  @IsOptional()
  @IsObject()
  tokenUsage?: Record<string, unknown> | null;

  @IsOptional()
  @IsString()
  error?: string | null;

  /** The reply replaced by Regenerate or an edit: left out of the model's context (docs/api.md, "Agent"). */
  @IsOptional()
  @IsBoolean()
  superseded?: boolean | null;

  /** Thoughts of the message, in order; replace the stored ones. */
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  thoughts?: Array<Record<string, unknown>>;
}

export class AppendMessageDto extends MessageFactsDto {
  @IsIn(MESSAGE_ROLES)
  role: MessageRole;

  @IsString()
  content: string;
}

/** Fields sent as null are removed from the message. */
export class UpdateLastMessageDto extends MessageFactsDto {
  @IsOptional()
  @IsString()
  content?: string;
}

/** The facts of a message body as a meta object (absent fields left out, nulls kept as removals). */
export function factsOf(body: MessageFactsDto): Record<string, unknown> {
  const facts: Record<string, unknown> = {};
  if (body.images !== undefined) facts.images = body.images;
  if (body.tokenUsage !== undefined) facts.tokenUsage = body.tokenUsage;
  if (body.error !== undefined) facts.error = body.error;
  if (body.superseded !== undefined) facts.superseded = body.superseded;
  return facts;
}

/** Query of GET a conversation: `from`, a message id, gives only the messages after it. */
@QueryDto()
export class ConversationQuery {
  @Documented({ type: 'string', description: 'A message id: only the messages after it' })
  from?: unknown;
}
