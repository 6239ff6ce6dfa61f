import { Injectable, Logger } from '@nestjs/common';
import { CONVERSATION_UPDATED, DEFAULT_CONVERSATION_TITLE } from '#contracts/conversations.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { Message } from '../kernel/conversation.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { EventBus } from '../ports/event-bus.port.js';
import { ModelProvider } from '../ports/model-provider.port.js';

/** The configuration switch (`POST /api/config {"assistant": {"autoTitle": true}}`); off by default. */
export const AUTO_TITLE_PREFERENCE = { branch: 'assistant', key: 'autoTitle' } as const;

/** The system prompt of the titling call; its first words let a test's scripted model tell it apart. */
export const TITLE_SYSTEM_PROMPT =
  'Title this conversation. Answer with a title of at most 6 words in the language of the conversation: ' +
  'no quotes, no final punctuation, nothing else.';

/** Most characters of each message handed to the titling call, and of the title kept. */
const TITLE_INPUT_CHARS = 2_000;
const TITLE_MAX_CHARS = 80;

export function autoTitleOn(configuration: Record<string, unknown>): boolean {
  const branch = configuration[AUTO_TITLE_PREFERENCE.branch];
  return (
    typeof branch === 'object' &&
    branch !== null &&
    (branch as Record<string, unknown>)[AUTO_TITLE_PREFERENCE.key] === true
  );
}

/** The model's answer as a title: its first non-empty line, without Markdown, quotes or a final period; '' when none. */
export function cleanTitle(answer: string): string {
  const line =
    answer
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? '';
  const title = line
    .replace(/^#+\s*/, '')
    .replace(/^(title|titre|titel)\s*:\s*/i, '')
    .replace(/^[*_"'`“”‘’«»]+|[*_"'`“”‘’«»]+$/g, '')
    .replace(/[.。!！]+$/, '')
    .trim();
  return title.length > TITLE_MAX_CHARS ? `${title.slice(0, TITLE_MAX_CHARS - 1).trimEnd()}…` : title;
}

/**
 * The first exchange of a conversation: its first user message and the first successful reply
 * after it, when that reply is the only successful one (the turn that just ended was the first
 * to succeed); null otherwise.
 */
export function firstExchange(messages: Message[]): { user: string; reply: string } | null {
  const replies = messages.filter(
    (m) => m.role === 'assistant' && typeof m.meta.error !== 'string' && m.meta.interrupted === undefined,
  );
  if (replies.length !== 1) return null;
  const user = messages.find((m) => m.role === 'user');
  if (!user || user.content.trim() === '') return null;
  return { user: user.content.slice(0, TITLE_INPUT_CHARS), reply: replies[0]!.content.slice(0, TITLE_INPUT_CHARS) };
}

/**
 * Titles a conversation from its first exchange with one short model call, as the best chat apps
 * do (docs/api.md, "Conversation titles"): only while the switch is on, a model is configured and
 * the title is still the default one (a conversation the person renamed is never retitled), on
 * the conversation's own model; `conversation:updated` tells every open list.
 */
@Injectable()
export class ConversationTitles {
  private readonly logger = new Logger('ConversationTitles');

  constructor(
    private readonly conversations: ConversationsService,
    private readonly models: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly bus: EventBus,
  ) {}

  /** After a completed chat turn; never throws (a failed titling leaves the default title). */
  async afterTurn(spaceId: string, conversationId: string): Promise<void> {
    try {
      await this.title(spaceId, conversationId);
    } catch (err) {
      this.logger.warn(`conversation ${conversationId} was not titled: ${(err as Error).message}`);
    }
  }

  private async title(spaceId: string, conversationId: string): Promise<void> {
    if (!autoTitleOn(await this.models.configuration())) return;
    // The record alone first: a titled conversation (every turn after its first) is not read whole.
    const record = await this.conversations.findById(conversationId);
    if (record?.spaceId !== spaceId || record.title !== DEFAULT_CONVERSATION_TITLE) return;
    const { conversation, messages } = await this.conversations.get(spaceId, conversationId);
    if (conversation.title !== DEFAULT_CONVERSATION_TITLE) return;
    const exchange = firstExchange(messages);
    if (!exchange) return;
    const model = await this.models.resolveForConversation(
      conversation.modelSourceId !== null && conversation.modelId !== null
        ? { modelSourceId: conversation.modelSourceId, modelId: conversation.modelId }
        : null,
    );
    if (!model) return;
    const parts: string[] = [];
    for await (const event of this.provider.stream(model.endpoint, {
      model: model.model,
      system: TITLE_SYSTEM_PROMPT,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: `The person wrote:\n${exchange.user}\n\nThe assistant answered:\n${exchange.reply}`,
            },
          ],
        },
      ],
      tools: [],
      maxOutputTokens: 64,
      reasoningEffort: 'off',
      signal: AbortSignal.timeout(60_000),
    })) {
      if (event.type === 'text_end') parts.push(event.text);
    }
    const title = cleanTitle(parts.join('\n'));
    if (title === '') return;
    // Renamed while the model was asked: the person's title wins.
    const now = await this.conversations.findById(conversationId);
    if (!now || now.title !== DEFAULT_CONVERSATION_TITLE) return;
    await this.conversations.update(spaceId, conversationId, { title });
    await this.bus.publish(CONVERSATION_UPDATED, { spaceId, conversationId, title });
  }
}
