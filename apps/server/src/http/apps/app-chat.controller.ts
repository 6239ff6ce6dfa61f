import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { AppChatSessionStateDto } from '#contracts/apps.js';
import type { MessageDto } from '#contracts/conversations.js';
import type { SuccessBody } from '#contracts/errors.js';
import { AppChatService } from '#core/apps/agent/app-chat.service.js';
import { toMessageDto } from '../conversations/conversations.presenter.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { APP_CHAT_SESSION_STATE, MESSAGE } from '../openapi/response-schemas.js';
import { arr, bool, int, obj, str } from '../openapi/schema.js';
import { ok } from '../common/envelope.js';
import { AppChatClearDto, AppChatSendDto } from './apps.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { AppIdParams } from '../common/path-params.js';

/** Chat with a digital human (docs/api/digital-humans.md, "Chat"). Results come over WebSocket. */
@ApiTags('Digital humans')
@Controller('api/apps/:appId')
export class AppChatController {
  constructor(private readonly chat: AppChatService) {}

  @Post('chat/send')
  @ApiOperation({
    summary: 'Chat with a digital human',
    description:
      'Generation runs in the background; results arrive over the WebSocket. `conversationId` isolates a thread (for example per end user).',
  })
  @HttpCode(200)
  @ApiData(obj({ conversationId: str() }, ['conversationId']), 409, 503)
  async send(
    @Param() { appId }: AppIdParams,
    @Body() body: AppChatSendDto,
  ): Promise<SuccessBody<{ conversationId: string }>> {
    return ok(await this.chat.send(appId, body));
  }

  @Get('chat/status')
  @ApiOperation({
    summary: 'Tell whether a digital human is generating',
    description:
      "`isGenerating` is true while any of the app's chat threads has a turn running; `conversationId` is the default thread's id `app-chat:<appId>`.",
  })
  @ApiData(obj({ isGenerating: bool(), conversationId: str() }, ['isGenerating', 'conversationId']))
  async status(
    @Param() { appId }: AppIdParams,
  ): Promise<SuccessBody<{ isGenerating: boolean; conversationId: string }>> {
    return ok(await this.chat.status(appId));
  }

  @Post('chat/stop')
  @ApiOperation({
    summary: 'Stop every chat session of a digital human',
    description:
      'Stops the running turn of every chat thread of the app (the default one and caller-chosen ones); history is kept.',
  })
  @HttpCode(200)
  @ApiDone()
  async stop(@Param() { appId }: AppIdParams): Promise<{ success: true }> {
    await this.chat.stop(appId);
    return { success: true };
  }

  @Get('chat/messages')
  @ApiOperation({
    summary: "Read a digital human's default chat",
    description: 'The messages of the default thread `app-chat:<appId>`; an empty list before its first message.',
  })
  @ApiData(arr(MESSAGE))
  async messages(@Param() { appId }: AppIdParams): Promise<SuccessBody<MessageDto[]>> {
    return ok((await this.chat.messages(appId)).map(toMessageDto));
  }

  @Post('chat/clear')
  @ApiOperation({
    summary: "Clear a digital human's default chat",
    description:
      "Stops the default thread's turn and deletes the thread; the next message starts a fresh one. Caller-chosen threads are left as they are.",
  })
  @HttpCode(200)
  @ApiDone(409)
  async clear(@Param() { appId }: AppIdParams, @Body() _body: AppChatClearDto): Promise<{ success: true }> {
    await this.chat.clear(appId);
    return { success: true };
  }

  @Post('chat/restart')
  @ApiOperation({
    summary: "Restart a digital human's chat sessions (history kept)",
    description: "Stops every chat thread's running turn and answers how many were generating as `sessionsClosed`.",
  })
  @HttpCode(200)
  @ApiData(obj({ sessionsClosed: int() }, ['sessionsClosed']))
  async restart(@Param() { appId }: AppIdParams): Promise<SuccessBody<{ sessionsClosed: number }>> {
    return ok(await this.chat.restart(appId));
  }

  @Get('chat/session-state')
  @ApiOperation({
    summary: "Read a digital human's chat session state",
    description:
      'Answers `{isActive, thoughts, spaceId}` for the default thread: whether a turn is running, its thoughts so far, and the space it lives in.',
  })
  @ApiData(APP_CHAT_SESSION_STATE)
  async sessionState(@Param() { appId }: AppIdParams): Promise<SuccessBody<AppChatSessionStateDto>> {
    return ok(await this.chat.sessionState(appId));
  }
}
