import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AppChannels } from '#contracts/apps.js';
import { conversationRecording, lastContextTokens, recordPartialReply } from '../../agent/chat-plan-builder.js';
import { buildHistory } from '../../agent/context-builder.js';
import type { TurnIO, TurnPlan } from '../../agent/engine/turn-plan.js';
import { ToolRegistry } from '../../agent/tool-registry.js';
import {
  isRefusal,
  refuseTurn,
  TurnPlanBuilder,
  type LostTurnOutcome,
  type TurnRefusal,
  type UnplannedEnding,
} from '../../agent/turn-plan-builder.js';
import { TurnPlanBuilders } from '../../agent/turn-plan-builders.js';
import { TurnTexts } from '../../agent/turn-endings.js';
import { conversationPin, TurnPreamble } from '../../agent/turn-preamble.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import { appMayUseServiceApi, serviceApiTools } from '../../assistant-api/service-api-tool.js';
import { McpServers } from '../../mcp/mcp-servers.service.js';
import { AssistantApi } from '../../ports/assistant-api.port.js';
import { withSkills } from '../../skills/skill-rules.js';
import { Clock } from '../../ports/clock.port.js';
import { EventBus } from '../../ports/event-bus.port.js';
import type { ReasoningEffort } from '../../ports/model-provider.port.js';
import type { TurnRecord } from '../../ports/turn.repository.port.js';
import { BrowserTurns } from '../../browser/browser-turns.js';
import { KnowledgeTurns } from '../../knowledge/knowledge-turns.js';
import { AppData } from '../app-data.js';
import { AppsService } from '../apps.service.js';
import type { ChannelTurnOrigin } from '#contracts/channels.js';
import { threadUpdated } from './app-chat.service.js';
import { AppChannelChat } from './app-channel-chat.js';
import { appChatEffort, appMayUseShell, appModelPin, appSystemPrompt } from './app-prompt.js';

/**
 * A turn of a digital human's chat thread (`app-chat`): the thread's history, the app's
 * system prompt, settings and memory, the built-in tools its permissions allow, the model
 * the thread is pinned to, else the app's choice (`userOverrides`), else the current one; the reply is kept in the thread like a chat's.
 */
@Injectable()
export class AppChatPlanBuilder extends TurnPlanBuilder implements OnModuleInit {
  readonly kind = 'app-chat' as const;

  constructor(
    private readonly builders: TurnPlanBuilders,
    private readonly apps: AppsService,
    private readonly data: AppData,
    private readonly conversations: ConversationsService,
    private readonly preamble: TurnPreamble,
    private readonly tools: ToolRegistry,
    private readonly clock: Clock,
    private readonly mcp: McpServers,
    private readonly api: AssistantApi,
    private readonly bus: EventBus,
    private readonly browser: BrowserTurns,
    private readonly knowledge: KnowledgeTurns,
    private readonly channels: AppChannelChat,
  ) {
    super();
  }

  onModuleInit(): void {
    this.builders.register(this);
  }

  override async endedWithoutPlan(turn: TurnRecord, ending: UnplannedEnding): Promise<void> {
    // Run again, the turn answers afresh: its half reply would end the new turn's history.
    if (ending.rerun) return;
    await recordPartialReply(this.conversations, turn, ending);
    if (ending.error !== TurnTexts.stopped) await this.tellChannel(turn, ending.partialReply ?? '', ending.error);
  }

  /**
   * A channel thread's turn lost with its replica: completed when its whole reply was recorded
   * (the reply is then sent, once, by `completedWhenLost`), else run again (its user cannot press
   * Retry). Other threads' turns are interrupted, as a chat's are.
   */
  override async whenLost(turn: TurnRecord): Promise<LostTurnOutcome> {
    if (channelOrigin(turn) === null) return 'interrupt';
    return (await this.recordedReply(turn)) === null ? 'rerun' : 'completed';
  }

  /**
   * Queues the recorded reply of a lost channel turn: under the reply's key, as the runner's end
   * queues it, so a reply the dead replica had queued (or partly sent) is not sent twice.
   */
  override async completedWhenLost(turn: TurnRecord): Promise<void> {
    const origin = channelOrigin(turn);
    const appId = turn.request.appId;
    if (origin === null || typeof appId !== 'string') return;
    const reply = await this.recordedReply(turn);
    if (reply === null) return;
    await this.channels.replied({ appId, conversationId: turn.conversationId, turnId: turn.id, origin, reply });
  }

  /** The turn's whole reply when its end recorded one (not a failed or interrupted one's). */
  private async recordedReply(turn: TurnRecord): Promise<string | null> {
    const { messages } = await this.conversations.get(turn.spaceId, turn.conversationId);
    const reply = messages.findLast(
      (m) => m.role === 'assistant' && m.meta?.turnId === turn.id && !m.meta.error && !m.meta.interrupted,
    );
    return reply ? reply.content : null;
  }

  /**
   * A message channel's user waits for an answer in their chat: a turn of theirs that failed or
   * was interrupted (its replica died, the server shut down) sends what it had written and why it
   * ended, so the message is not left unanswered. A `/stop` is answered by the channel itself.
   */
  private async tellChannel(turn: TurnRecord, partialReply: string, error: string): Promise<void> {
    const origin = channelOrigin(turn);
    const appId = turn.request.appId;
    if (origin === null || typeof appId !== 'string') return;
    const written = partialReply.trim();
    await this.channels.replied({
      appId,
      conversationId: turn.conversationId,
      turnId: turn.id,
      origin,
      reply: `${written === '' ? '' : `${written}\n\n`}(${error})`,
    });
  }

  async build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal> {
    const appId = typeof turn.request.appId === 'string' ? turn.request.appId : null;
    const app = appId ? await this.apps.get(appId).catch(() => null) : null;
    if (!app) return refuseTurn('The digital human of this chat no longer exists.', { errorCode: 'NOT_FOUND' });
    const { conversation, messages, space: read } = await this.conversations.forTurn(turn.spaceId, turn.conversationId);
    const ground = await this.preamble.prepareWithSkills({
      turn,
      io,
      messages,
      pins: [conversationPin(conversation), appModelPin(app)],
      space: read,
    });
    if (isRefusal(ground)) return ground;
    const { space, skills } = ground;
    const request = turn.request as { thinkingEnabled?: boolean; channel?: ChannelTurnOrigin; guest?: boolean };
    const origin = request.channel ?? null;
    const effort: ReasoningEffort =
      conversation.reasoningEffort ?? appChatEffort(app) ?? (request.thinkingEnabled ? 'medium' : 'off');
    io.historyHolds(messages.map((m) => m.id));
    const browser = this.browser.forAppChat(app, space, turn.conversationId);
    const knowledge = await this.knowledge.forTurn({ spaceId: space.id, appId: app.id });
    // A message channel's guest (docs/api/channels.md, "Owners and guests") chats only: no tool
    // that writes or runs (searching a knowledge base only reads). A channel thread has nobody to
    // answer AskUserQuestion.
    const tools =
      origin !== null && request.guest === true
        ? this.tools
            .builtins({ bash: false, askUser: false })
            .without('Write', 'Edit')
            .with(...knowledge.tools)
        : this.tools
            .builtins({ bash: appMayUseShell(app), ...(origin !== null ? { askUser: false } : {}) })
            .with(
              ...(await this.mcp.chatTools(space.id, app)),
              ...browser.tools,
              ...knowledge.tools,
              ...skills.tools,
              ...(appMayUseServiceApi(app) ? await serviceApiTools(this.api) : []),
            );
    const recording = conversationRecording(this.conversations, turn);
    return {
      system: withSkills(
        appSystemPrompt({
          app,
          workspacePath: space.path,
          now: new Date(this.clock.now()),
          memory: await this.data.readMemory(app.id, app.spaceId, space),
          toolNames: tools.names(),
          closing: [
            ...(browser.prompt === null ? [] : [browser.prompt]),
            ...(knowledge.prompt === null ? [] : [knowledge.prompt]),
            'You are chatting with your user: answer their messages directly.',
          ],
        }),
        skills,
      ),
      tools,
      history: buildHistory(messages),
      model: { ...ground.model, effort },
      workspace: space,
      contextTokens: lastContextTokens(messages),
      io,
      app,
      hooks: browser.hooks({
        ...recording,
        onFailure: async (failure) => {
          await recording.onFailure(failure);
          if (failure.interrupted !== 'stop') await this.tellChannel(turn, failure.reply, failure.error);
        },
        onComplete: async (result) => {
          await recording.onComplete(result);
          if (origin !== null) {
            // The channels context sends it to the chat and announces the thread's update.
            await this.channels.replied({
              appId: app.id,
              conversationId: turn.conversationId,
              turnId: turn.id,
              origin,
              reply: result.reply,
            });
            return;
          }
          await this.bus.publish(
            AppChannels.imSessionUpdated,
            threadUpdated(app.id, turn.conversationId, result.reply),
          );
        },
      }),
    };
  }
}

const channelOrigin = (turn: TurnRecord): ChannelTurnOrigin | null =>
  (turn.request as { channel?: ChannelTurnOrigin }).channel ?? null;
