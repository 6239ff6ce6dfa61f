import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AgentChannels } from '#contracts/agent.js';
import { conversationRecording, lastContextTokens } from '../../agent/chat-plan-builder.js';
import { buildHistory } from '../../agent/context-builder.js';
import type { TurnIO, TurnPlan } from '../../agent/engine/turn-plan.js';
import { ToolRegistry } from '../../agent/tool-registry.js';
import { TurnTexts } from '../../agent/turn-endings.js';
import { refuseTurn, TurnPlanBuilder, type TurnRefusal } from '../../agent/turn-plan-builder.js';
import { TurnPlanBuilders } from '../../agent/turn-plan-builders.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import { appMayUseServiceApi, serviceApiTools } from '../../assistant-api/service-api-tool.js';
import { McpServers } from '../../mcp/mcp-servers.service.js';
import { AssistantApi } from '../../ports/assistant-api.port.js';
import { lastUserText, withSkills } from '../../skills/skill-rules.js';
import { SkillsService } from '../../skills/skills.service.js';
import { ModelSourcesService } from '../../models/model-sources.service.js';
import { Clock } from '../../ports/clock.port.js';
import { ModelProvider, type ReasoningEffort } from '../../ports/model-provider.port.js';
import type { TurnRecord } from '../../ports/turn.repository.port.js';
import { SpacesService } from '../../spaces/spaces.service.js';
import { AppData } from '../app-data.js';
import { AppsService } from '../apps.service.js';
import { appMayUseShell, appSystemPrompt } from './app-prompt.js';

/**
 * A turn of a digital human's chat thread (`app-chat`): the thread's history, the app's
 * system prompt, settings and memory, the built-in tools its permissions allow, the default
 * model; the reply is kept in the thread like a chat's.
 */
@Injectable()
export class AppChatPlanBuilder extends TurnPlanBuilder implements OnModuleInit {
  readonly kind = 'app-chat' as const;

  constructor(
    private readonly builders: TurnPlanBuilders,
    private readonly apps: AppsService,
    private readonly data: AppData,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly models: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly tools: ToolRegistry,
    private readonly clock: Clock,
    private readonly mcp: McpServers,
    private readonly skills: SkillsService,
    private readonly api: AssistantApi,
  ) {
    super();
  }

  onModuleInit(): void {
    this.builders.register(this);
  }

  async build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal> {
    const appId = typeof turn.request.appId === 'string' ? turn.request.appId : null;
    const app = appId ? await this.apps.get(appId).catch(() => null) : null;
    if (!app) return refuseTurn('The digital human of this chat no longer exists.', { errorCode: 'NOT_FOUND' });
    const space = await this.spaces.get(turn.spaceId);
    const { conversation, messages } = await this.conversations.get(turn.spaceId, turn.conversationId);
    const skills = await this.skills.forTurn(space.id, lastUserText(messages));
    if (!messages.some((m) => m.role === 'assistant')) {
      await io.emit(AgentChannels.sessionInfo, { slashCommands: skills.names, skills: skills.names, agents: [] });
    }
    if (!(await this.spaces.folderExists(space))) {
      return refuseTurn(TurnTexts.workDirMissing, {
        errorType: 'working_dir_unavailable',
        workDirIssue: { path: space.path, reason: 'missing' },
      });
    }
    const resolved = await this.models.resolveForConversation(
      conversation.modelSourceId && conversation.modelId
        ? { modelSourceId: conversation.modelSourceId, modelId: conversation.modelId }
        : null,
    );
    if (!resolved) return refuseTurn(TurnTexts.noModel, { errorCode: 'NO_MODEL' });
    const request = turn.request as { thinkingEnabled?: boolean };
    const effort: ReasoningEffort = conversation.reasoningEffort ?? (request.thinkingEnabled ? 'medium' : 'off');
    await io.takePendingInput();
    const tools = this.tools
      .builtins({ bash: appMayUseShell(app) })
      .with(
        ...(await this.mcp.chatTools(space.id, app)),
        ...skills.tools,
        ...(appMayUseServiceApi(app) ? serviceApiTools(this.api) : []),
      );
    return {
      system: withSkills(
        appSystemPrompt({
          app,
          workspacePath: space.path,
          now: new Date(this.clock.now()),
          memory: await this.data.readMemory(app.id, app.spaceId),
          toolNames: tools.names(),
          closing: ['You are chatting with your user: answer their messages directly.'],
        }),
        skills,
      ),
      tools,
      history: buildHistory(messages),
      model: {
        endpoint: resolved.endpoint,
        model: resolved.model,
        info: this.provider.info(resolved.endpoint.provider, resolved.model),
        effort,
      },
      workspace: space,
      contextTokens: lastContextTokens(messages),
      io,
      hooks: conversationRecording(this.conversations, turn),
    };
  }
}
