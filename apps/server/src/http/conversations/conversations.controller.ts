import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import type {
  ConversationDto,
  ConversationSummaryDto,
  CreatedConversationDto,
  MessageDto,
  ThoughtDto,
} from '#contracts/conversations.js';
import { ConversationsService } from '#core/conversations/conversations.service.js';
import {
  AppendMessageDto,
  ConversationQuery,
  CreateConversationDto,
  factsOf,
  StarConversationDto,
  UpdateConversationDto,
  UpdateLastMessageDto,
} from './conversations.dto.js';
import { toConversationDto, toMessageDto, toSummaryDto } from './conversations.presenter.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import {
  CONVERSATION,
  CONVERSATION_SUMMARY,
  CREATED_CONVERSATION,
  MESSAGE,
  THOUGHT,
} from '../openapi/response-schemas.js';
import { arr } from '../openapi/schema.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { ConversationMessageParams, SpaceConversationParams, SpaceIdParams } from '../common/path-params.js';

/** Conversation records (docs/api.md, "Conversations"). */
@ApiTags('Conversations')
@Controller('api/spaces/:spaceId/conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @ApiOperation({
    summary: "List a space's conversations",
    description:
      "Answers the space's conversations without their messages, most recently updated first; ephemeral conversations are left out. 404 `Space not found` for an unknown space.",
  })
  @Assistant()
  @ApiData(arr(CONVERSATION_SUMMARY))
  async list(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<ConversationSummaryDto[]>> {
    return ok((await this.conversations.list(spaceId)).map(toSummaryDto));
  }

  @Post()
  @ApiOperation({
    summary: 'Create a conversation',
    description:
      'Creates an empty conversation with an optional `title` and `reasoningEffort` (`ephemeral: true` keeps it out of the list) and answers its `{id, title}`. 404 `Space not found` for an unknown space.',
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(CREATED_CONVERSATION)
  async create(
    @Param() { spaceId }: SpaceIdParams,
    @Body() body: CreateConversationDto,
  ): Promise<SuccessBody<CreatedConversationDto>> {
    const created = await this.conversations.create(spaceId, body ?? {});
    return ok({ id: created.id, title: created.title });
  }

  @Get(':conversationId')
  @ApiOperation({
    summary: 'Read a conversation with its messages',
    description:
      'With `from` (a message id), the messages start at it, inclusive, and `messagesFrom` says so; an unknown id gives the whole conversation.',
  })
  @Assistant()
  @ApiData(CONVERSATION)
  async get(
    @Param() { spaceId, conversationId }: SpaceConversationParams,
    @Query() query: ConversationQuery,
  ): Promise<SuccessBody<ConversationDto>> {
    const from = typeof query.from === 'string' && query.from.length > 0 ? query.from : undefined;
    return ok(toConversationDto(await this.conversations.get(spaceId, conversationId, from), from));
  }

  @Put(':conversationId')
  @ApiOperation({
    summary: 'Rename a conversation or pin its model',
    description:
      'Changes any of `title`, the pinned model (`modelSourceId` with `modelId`) and `reasoningEffort` (`null` clears it), and answers the whole conversation. 400 `Nothing to update: send title, modelSourceId with modelId, or reasoningEffort` for an empty body; 404 `Conversation not found` for an id not in this space.',
  })
  @Assistant()
  @ApiData(CONVERSATION)
  async update(
    @Param() { spaceId, conversationId }: SpaceConversationParams,
    @Body() body: UpdateConversationDto,
  ): Promise<SuccessBody<ConversationDto>> {
    return ok(toConversationDto(await this.conversations.update(spaceId, conversationId, body ?? {})));
  }

  @Delete(':conversationId')
  @ApiOperation({
    summary: 'Delete a conversation (no undo)',
    description:
      'Removes the conversation with its messages and their thoughts; there is no backup. 404 `Conversation not found` for an id not in this space.',
  })
  @Assistant()
  @ApiDone()
  async remove(@Param() { spaceId, conversationId }: SpaceConversationParams): Promise<{ success: true }> {
    await this.conversations.remove(spaceId, conversationId);
    return { success: true };
  }

  /** Wrong ids give an empty array, not 404 (docs/api.md, "Conversations"). */
  @Get(':conversationId/messages/:messageId/thoughts')
  @ApiOperation({
    summary: 'Read the thoughts of a message',
    description:
      'Answers the thoughts stored with one message. Wrong ids (space, conversation or message) answer an empty array, not 404.',
  })
  @Assistant()
  @ApiData(arr(THOUGHT, 'Empty for unknown ids'))
  async thoughts(
    @Param() { spaceId, conversationId, messageId }: ConversationMessageParams,
  ): Promise<SuccessBody<ThoughtDto[]>> {
    return ok(await this.conversations.thoughts(spaceId, conversationId, messageId));
  }

  @Post(':conversationId/star')
  @ApiOperation({
    summary: 'Star or unstar a conversation',
    description:
      "Sets the conversation's `starred` flag. 400 `starred must be a boolean`; 404 `Conversation not found` for an id not in this space.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone()
  async star(
    @Param() { spaceId, conversationId }: SpaceConversationParams,
    @Body() body: StarConversationDto,
  ): Promise<{ success: true }> {
    await this.conversations.star(spaceId, conversationId, body.starred);
    return { success: true };
  }

  /** Appends a message (with its thoughts when given) at the end; returns the stored message. */
  @Post(':conversationId/messages')
  @ApiOperation({
    summary: 'Append a message to a conversation',
    description:
      'Appends a message (`role`, `content`, optional facts and `thoughts`) at the end of the conversation and answers the stored message. 400 naming the field for a bad value (e.g. `role must be one of: …`); 404 `Conversation not found` for an id not in this space.',
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(MESSAGE)
  async appendMessage(
    @Param() { spaceId, conversationId }: SpaceConversationParams,
    @Body() body: AppendMessageDto,
  ): Promise<SuccessBody<MessageDto>> {
    const message = await this.conversations.appendMessageInSpace(
      spaceId,
      conversationId,
      { role: body.role, content: body.content, meta: factsOf(body) },
      body.thoughts,
    );
    return ok(toMessageDto(message));
  }

  /** Changes the last message: content replaced, facts merged (null removes one), thoughts replaced. */
  @Put(':conversationId/messages/last')
  @ApiOperation({
    summary: 'Update the last message of a conversation',
    description:
      "Changes the conversation's last message: `content` replaced, facts merged (`null` removes one), `thoughts` replaced; answers the stored message. 404 `Conversation not found` for an id not in this space, 404 `No messages` when it has none.",
  })
  @Assistant()
  @ApiData(MESSAGE)
  async updateLastMessage(
    @Param() { spaceId, conversationId }: SpaceConversationParams,
    @Body() body: UpdateLastMessageDto,
  ): Promise<SuccessBody<MessageDto>> {
    const message = await this.conversations.updateLastMessageInSpace(
      spaceId,
      conversationId,
      { content: body.content, meta: factsOf(body) },
      body.thoughts,
    );
    return ok(toMessageDto(message));
  }
}
