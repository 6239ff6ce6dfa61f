import { Injectable } from '@nestjs/common';
import type { Thought, TokenUsageDto } from '#contracts/agent.js';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import { BrowserTurns } from '../browser/browser-turns.js';
import { KnowledgeTurns } from '../knowledge/knowledge-turns.js';
import { ConversationToolsets } from './conversation-toolsets.js';
import { ConversationTitles } from './conversation-titles.js';
import { isCompactionSummary, type Message } from '../kernel/conversation.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { assistantMayUseServiceApi, serviceApiTools } from '../assistant-api/service-api-tool.js';
import { McpServers } from '../mcp/mcp-servers.service.js';
import { AssistantApi } from '../ports/assistant-api.port.js';
import { withSkills } from '../skills/skill-rules.js';
import { MemoryConsolidationService } from '../memory/memory-consolidation.service.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { Clock } from '../ports/clock.port.js';
import type { ReasoningEffort } from '../ports/model-provider.port.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { buildHistory, COMPACTION_KIND, systemPrompt } from './context-builder.js';
import { MessageAttachments } from './message-attachments.js';
import type { PlanHooks, TurnIO, TurnPlan } from './engine/turn-plan.js';
import { RecordRetry } from './record-retry.js';
import { ToolRegistry } from './tool-registry.js';
import { isRefusal, TurnPlanBuilder, type TurnRefusal, type UnplannedEnding } from './turn-plan-builder.js';
import { conversationPin, TurnPreamble } from './turn-preamble.js';

/**
 * A chat turn: the conversation's history in its space's workspace, the built-in tools,
 * the conversation's pinned model (else the default); the reply and compactions are kept
 * in the conversation, the space's memory is offered a consolidation afterwards, and a
 * conversation still untitled is titled from its first exchange (when switched on).
 */
@Injectable()
export class ChatPlanBuilder extends TurnPlanBuilder {
  readonly kind = 'chat' as const;

  constructor(
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly preamble: TurnPreamble,
    private readonly models: ModelSourcesService,
    private readonly tools: ToolRegistry,
    private readonly memory: MemoryConsolidationService,
    private readonly clock: Clock,
    /** The reply is kept until the database takes it (an outage at the end of a turn loses nothing). */
    private readonly record: RecordRetry,
    private readonly mcp: McpServers,
    private readonly api: AssistantApi,
    private readonly browser: BrowserTurns,
    private readonly toolsets: ConversationToolsets,
    private readonly knowledge: KnowledgeTurns,
    private readonly titles: ConversationTitles,
    private readonly attachments: MessageAttachments,
  ) {
    super();
  }

  override endedWithoutPlan(turn: TurnRecord, ending: UnplannedEnding): Promise<void> {
    return recordPartialReply(this.conversations, turn, ending);
  }

  /** Whether this turn has the browser: a message's `aiBrowserEnabled` opens or closes it first. */
  private async browserOpen(turn: TurnRecord): Promise<boolean> {
    const wanted = (turn.request as { aiBrowserEnabled?: unknown }).aiBrowserEnabled;
    if (typeof wanted === 'boolean') {
      await this.toolsets.set(turn.spaceId, turn.conversationId, AI_BROWSER_SERVER, wanted, 'message');
      return wanted;
    }
    return this.toolsets.isOpen(turn.conversationId, AI_BROWSER_SERVER);
  }

  async build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal> {
    const { conversation, messages, space: read } = await this.conversations.forTurn(turn.spaceId, turn.conversationId);
    const ground = await this.preamble.prepareWithSkills({
      turn,
      io,
      messages,
      pins: [conversationPin(conversation)],
      space: read,
    });
    if (isRefusal(ground)) return ground;
    const { space, skills } = ground;
    const request = turn.request as { reasoningEffort?: ReasoningEffort; thinkingEnabled?: boolean };
    const effort: ReasoningEffort =
      conversation.reasoningEffort ?? request.reasoningEffort ?? (request.thinkingEnabled ? 'medium' : 'off');
    // Input that arrived before the history was read is in it; any later joins the first step.
    io.historyHolds(messages.map((m) => m.id));
    // The assistant operates the service only where its preference says so.
    const serviceApi = assistantMayUseServiceApi(await this.models.configuration())
      ? await serviceApiTools(this.api)
      : [];
    const browser = this.browser.forChat(space, turn.conversationId, await this.browserOpen(turn));
    // A message's knowledgeBaseId gives this turn that knowledge base, whatever the bindings.
    const kbId = (turn.request as { knowledgeBaseId?: unknown }).knowledgeBaseId;
    const knowledge = await this.knowledge.forTurn({
      spaceId: space.id,
      kbId: typeof kbId === 'string' ? kbId : null,
      withDefault: true,
    });
    const tools = this.tools
      .builtins()
      .with(
        ...(await this.mcp.chatTools(space.id)),
        ...browser.tools,
        ...knowledge.tools,
        ...skills.tools,
        ...serviceApi,
      );
    return {
      system: withSkills(
        withParagraph(
          systemPrompt({
            workspacePath: space.path,
            now: new Date(this.clock.now()),
            memoryEnabled: this.spaces.preferencesOf(space).memory.enabled,
            toolNames: tools.names(),
          }),
          [browser.prompt, knowledge.prompt].filter((p) => p !== null).join('\n\n') || null,
        ),
        skills,
      ),
      tools,
      history: buildHistory(await this.attachments.withImages(space, messages)),
      model: { ...ground.model, effort },
      workspace: space,
      contextTokens: lastContextTokens(messages),
      io,
      hooks: {
        ...browser.hooks(
          conversationRecording(this.record.keeping(this.conversations, `turn ${turn.id}`, 'appendMessage'), turn),
        ),
        // Memory grows with the conversation; the space's cadence decides when to reorganize it.
        afterCompleted: async () => {
          // Titling does not hold the turn's end: its title arrives as `conversation:updated`.
          void this.titles.afterTurn(turn.spaceId, turn.conversationId);
          await this.memory.afterTurn(turn.spaceId);
        },
      },
    };
  }
}

/**
 * The hooks of a turn whose reply belongs to its conversation: the reply (or what a failed
 * turn produced) and compaction summaries become messages of the conversation. Any turn
 * kind that talks in a conversation (chat, a digital human's threads) records this way.
 */
export function conversationRecording(
  conversations: Pick<ConversationsService, 'appendMessage'>,
  turn: TurnRecord,
): Pick<PlanHooks, 'onComplete' | 'onFailure' | 'onCompacted'> {
  const { conversationId } = turn;
  return {
    onComplete: async ({ reply, thoughts, tokenUsage, model, contextTokens }) => {
      await conversations.appendMessage(
        conversationId,
        { role: 'assistant', content: reply, meta: { turnId: turn.id, model, tokenUsage, contextTokens } },
        thoughts,
      );
    },
    onFailure: async ({ reply, thoughts, tokenUsage, error, interrupted }) => {
      if (reply === '' && thoughts.length === 0) return;
      await conversations.appendMessage(
        conversationId,
        {
          role: 'assistant',
          content: reply,
          meta: { turnId: turn.id, ...(interrupted ? { interrupted: true } : { error }), tokenUsage },
        },
        thoughts,
      );
    },
    onCompacted: async ({ summary, preTokens }) => {
      await conversations.appendMessage(conversationId, {
        role: 'system',
        content: summary,
        meta: { kind: COMPACTION_KIND, preTokens, turnId: turn.id },
      });
    },
  };
}

const NO_USAGE: TokenUsageDto = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  totalCostUsd: 0,
  contextWindow: 0,
};

/**
 * A turn that ended with no runner behind it (its replica died): what it had streamed and the
 * steps its record kept become the conversation's interrupted reply, as a live failure's would.
 */
export async function recordPartialReply(
  conversations: Pick<ConversationsService, 'appendMessage'>,
  turn: TurnRecord,
  ending: UnplannedEnding,
): Promise<void> {
  await conversationRecording(conversations, turn).onFailure({
    error: ending.error,
    interrupted: ending.status === 'interrupted' ? 'shutdown' : null,
    reply: ending.partialReply ?? '',
    thoughts: turn.thoughts as Thought[],
    tokenUsage: NO_USAGE,
  });
}

/** A system prompt with one more paragraph (none when null). */
export function withParagraph(system: string, paragraph: string | null): string {
  return paragraph === null ? system : `${system}\n\n${paragraph}`;
}

/** The context the previous reply of a conversation ended with (0 after a compaction or when unknown). */
export function lastContextTokens(messages: Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (isCompactionSummary(m)) return 0;
    if (m.role === 'assistant' && typeof m.meta.contextTokens === 'number') return m.meta.contextTokens;
  }
  return 0;
}
