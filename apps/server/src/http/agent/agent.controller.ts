import { Body, Controller, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { ApprovalsService } from '#core/approvals/approvals.service.js';
import type { SessionState, ToolsetEntry } from '#contracts/agent.js';
import { AgentService } from '#core/agent/agent.service.js';
import type { McpServerStatusDto } from '#contracts/mcp.js';
import { McpServers } from '#core/mcp/mcp-servers.service.js';
import { ModelSourceTester, type ModelSourceTestResult } from '#core/models/model-source-tester.js';
import { ApiData, ApiDone, ApiDoneOrFailure } from '../openapi/api-data.js';
import {
  ENGINE_CAPABILITIES,
  MCP_SERVER_STATUS,
  MODEL_SOURCE_TEST,
  SESSION_STATE,
  TOOLSET,
} from '../openapi/response-schemas.js';
import { arr, bool, str } from '../openapi/schema.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import { Relayed } from '../assistant-api/relayed.js';
import type { SuccessBody } from '#contracts/errors.js';
import {
  AnswerQuestionDto,
  ApproveDto,
  RejectDto,
  SendMessageDto,
  StopDto,
  TestMcpDto,
  TestModelSourceDto,
  ToolsetChangeDto,
  ToolsetsDto,
} from './agent.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { ConversationIdParams } from '../common/path-params.js';

/** The web app names itself in this header, so the audit of an approval can say it answered. */
export const CLIENT_HEADER = 'x-svc-client';

/** Agent operations (docs/api.md, "The assistant"). Starting work answers at once; progress arrives as events. */
@ApiTags('Conversations')
@Controller('api/agent')
export class AgentController {
  constructor(
    private readonly agent: AgentService,
    private readonly mcp: McpServers,
    private readonly modelSources: ModelSourceTester,
    private readonly approvals: ApprovalsService,
  ) {}

  @Post('message')
  @ApiOperation({
    summary: 'Send a message to the assistant',
    description:
      'Accepted, not answered: the reply streams over the WebSocket (`agent:*` events) and is stored in the conversation. Create the conversation first. A message sent while the conversation is generating joins the running turn.',
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone(404, 409)
  async message(@Body() body: SendMessageDto): Promise<{ success: true }> {
    await this.agent.sendMessage(body);
    return { success: true };
  }

  @Get('generating/:conversationId')
  @ApiOperation({
    summary: 'Tell whether a conversation is generating',
    description:
      'Answers `true` while a turn of the conversation is queued or running, else `false` (also for an unknown id).',
  })
  @Assistant()
  @ApiData(bool('Whether a turn of this conversation is running'))
  async generating(@Param() { conversationId }: ConversationIdParams): Promise<SuccessBody<boolean>> {
    return { success: true, data: await this.agent.isGenerating(conversationId) };
  }

  @Get('sessions')
  @ApiOperation({
    summary: 'List the conversations generating now',
    description: 'Answers the ids of the conversations that have a queued or running turn now, across all spaces.',
  })
  @Assistant()
  @ApiData(arr(str(), 'Conversation ids with a running turn'))
  async sessions(): Promise<SuccessBody<string[]>> {
    return { success: true, data: await this.agent.sessions() };
  }

  @Get('session/:conversationId')
  @ApiOperation({
    summary: 'Read the session state of a conversation (recovery after a refresh)',
    description:
      'Answers what a client needs to rebuild the view after a refresh: whether a turn is active, its id, status, start time and thoughts so far, and the pending question or tool approval it waits on (all `null`/empty when nothing runs, also for an unknown id).',
  })
  @Assistant()
  @ApiData(SESSION_STATE)
  async session(@Param() { conversationId }: ConversationIdParams): Promise<SuccessBody<SessionState>> {
    return { success: true, data: await this.agent.session(conversationId) };
  }

  @Post('stop')
  @ApiOperation({
    summary: 'Stop generating (one conversation, or everything)',
    description:
      "With `conversationId`, stops that conversation's turn; without it, every queued or running turn. A running turn ends as interrupted with its usual `agent:*` events; a queued one ends at once. Stopping a conversation that is not generating changes nothing.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone()
  async stop(@Body() body: StopDto): Promise<{ success: true }> {
    await this.agent.stop(body.conversationId);
    return { success: true };
  }

  @Post('answer-question')
  @ApiOperation({
    summary: 'Answer a pending question of the assistant',
    description:
      'Answers the `agent:ask-question` with this `id`. With no matching pending question: `{success:false, error:"No pending question found for id: <id>"}` (HTTP 200).',
  })
  @Assistant()
  @HttpCode(200)
  @ApiDoneOrFailure()
  async answer(@Body() body: AnswerQuestionDto): Promise<{ success: boolean; error?: string }> {
    const answered = await this.agent.answerQuestion(body);
    return answered ? { success: true } : { success: false, error: `No pending question found for id: ${body.id}` };
  }

  /**
   * Without an approval policy permissions are auto-allowed: approve and reject change nothing.
   * With one (docs/api/agent.md, "Tool approvals") they decide the conversation's waiting tool
   * call; 409 when nothing waits.
   */
  @Post('approve')
  @ApiOperation({
    summary: 'Approve a tool call (no-op: permissions are auto-allowed)',
    description:
      'Without an approval policy in force, tool calls are auto-allowed and this changes nothing (`{success:true}`). With one, it approves the waiting call of `conversationId` (of `toolId` when given) and wakes the turn: 400 `conversationId is required and must be a string`, or naming a field that is not a string; 409 `No tool call is waiting for approval` when nothing waits.',
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone(400, 409)
  async approve(
    @Body() body: ApproveDto,
    @Headers(CLIENT_HEADER) client: string | undefined,
    @Relayed() relayed: boolean,
  ): Promise<{ success: true }> {
    await this.approvals.answer({ ...body, approved: true, by: deciderOf(client, relayed) });
    return { success: true };
  }

  @Post('reject')
  @ApiOperation({
    summary: 'Reject a tool call (no-op: permissions are auto-allowed)',
    description:
      'Without an approval policy in force, tool calls are auto-allowed and this changes nothing (`{success:true}`). With one, it rejects the waiting call of `conversationId` (of `toolId` when given) with an optional `reason` (up to 2,000 characters kept) and wakes the turn: 400 `conversationId is required and must be a string`, or naming a field that is not a string; 409 `No tool call is waiting for approval` when nothing waits.',
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone(400, 409)
  async reject(
    @Body() body: RejectDto,
    @Headers(CLIENT_HEADER) client: string | undefined,
    @Relayed() relayed: boolean,
  ): Promise<{ success: true }> {
    await this.approvals.answer({ ...body, approved: false, by: deciderOf(client, relayed) });
    return { success: true };
  }

  @Post('toolsets/list')
  @ApiOperation({
    summary: 'List the toolsets of a conversation',
    description:
      "Answers the toolsets of the conversation with whether each is open: workspace files, the shell, the space's and global MCP servers (always open) and the openable ones such as `ai-browser`. 404 `Space not found` for an unknown space.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(arr(TOOLSET), 404)
  async toolsets(@Body() body: ToolsetsDto): Promise<SuccessBody<ToolsetEntry[]>> {
    return { success: true, data: await this.agent.toolsets(body.spaceId, body.conversationId) };
  }

  /** Opens an openable toolset (`ai-browser`) for the conversation's next turns; `toolsets:changed`. */
  @Post('toolsets/open')
  @ApiOperation({
    summary: "Open an openable toolset (ai-browser) for the conversation's next turns",
    description:
      "Opens the toolset (`toolsetId`, e.g. `ai-browser`) for the conversation's next turns and answers the toolsets; emits `toolsets:changed` on the WebSocket when that changed something. 400 for a toolset that cannot be opened (the others are always open); 404 for an unknown space or conversation.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(arr(TOOLSET), 404)
  async openToolset(@Body() body: ToolsetChangeDto): Promise<SuccessBody<ToolsetEntry[]>> {
    return { success: true, data: await this.agent.changeToolset(body, true) };
  }

  /** Closes an openable toolset for the conversation's next turns; `toolsets:changed`. */
  @Post('toolsets/close')
  @ApiOperation({
    summary: "Close an openable toolset for the conversation's next turns",
    description:
      "Closes the toolset (`toolsetId`) for the conversation's next turns and answers the toolsets; emits `toolsets:changed` on the WebSocket when that changed something. 400 for a toolset that cannot be closed (the others are always open); 404 for an unknown space or conversation.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(arr(TOOLSET), 404)
  async closeToolset(@Body() body: ToolsetChangeDto): Promise<SuccessBody<ToolsetEntry[]>> {
    return { success: true, data: await this.agent.changeToolset(body, false) };
  }

  /** Connects to the given (`servers`) or installed MCP servers and answers each one's status, tools or error. */
  @Post('test-mcp')
  @ApiOperation({
    summary: 'Test connections to MCP servers',
    description:
      "Connects to the given `servers` (definitions by name), or without them to the installed servers (global and, with `spaceId`, the space's), and answers each server's status, tools or error. An HTTP server at a refused internal address is reported as failed; 400 for a bad definition; 403 when a stdio command is given and the operator does not allow MCP commands.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(arr(MCP_SERVER_STATUS), 403)
  async testMcp(@Body() body: TestMcpDto): Promise<SuccessBody<McpServerStatusDto[]>> {
    return { success: true, data: await this.mcp.test(body) };
  }

  /**
   * An addition to the interface (docs/api.md, "Testing a model source"): one minimal real call to a stored (`modelSourceId`) or unsaved
   * (`source`) model source. A failed call is an answer (`ok: false` with the provider's message), not an error.
   * Through the assistant's listener only stored sources at their stored addresses are tested (403 otherwise).
   */
  @Post('test-model-source')
  @ApiOperation({
    summary: 'Test a model source with one short request',
    description:
      "Makes one minimal real call to a stored (`modelSourceId`) or unsaved (`source`) model source, optionally with `modelId`, and answers `{ok, modelId, latencyMs}` or `{ok:false, modelId, error}`: a failed call is an answer, not an error. 400 for a bad body; 404 for an unknown `modelSourceId`; 403 through the assistant's listener for anything but a stored source at its stored address.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(MODEL_SOURCE_TEST, 403, 404)
  async testModelSource(
    @Body() body: TestModelSourceDto,
    @Relayed() relayed: boolean,
  ): Promise<SuccessBody<ModelSourceTestResult>> {
    return { success: true, data: await this.modelSources.test(body ?? {}, relayed ? 'assistant' : 'user') };
  }

  @Get('engine-capabilities')
  @ApiOperation({
    summary: "Read the agent engine's capabilities",
    description:
      'Answers a fixed description of the agent engine: providers, tool names, feature flags (thinking, images, compaction, questions, MCP, resumable events) and the step limit per turn.',
  })
  @Assistant()
  @ApiData(ENGINE_CAPABILITIES)
  capabilities(): SuccessBody<Record<string, unknown>> {
    return { success: true, data: this.agent.capabilities() };
  }
}

function deciderOf(client: string | undefined, relayed: boolean): 'api' | 'web' | 'assistant' {
  if (relayed) return 'assistant';
  return client === 'web' ? 'web' : 'api';
}
