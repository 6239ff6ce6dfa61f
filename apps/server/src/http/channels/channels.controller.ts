import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import express, { type Request, type Response } from 'express';
import type { ChannelInstanceDto, ChannelProviderDto, ChannelStatusDto, ImSessionDto } from '#contracts/channels.js';
import type { MessageDto } from '#contracts/conversations.js';
import { ErrorTexts, type SuccessBody } from '#contracts/errors.js';
import type { ChannelHookRefusal } from '#core/channels/channel-provider.port.js';
import { ChannelsService } from '#core/channels/channels.service.js';
import { WEBHOOK_MAX_BYTES } from '#core/triggers/webhook-rules.js';
import { ok, sendFailure } from '../common/envelope.js';
import { toMessageDto } from '../conversations/conversations.presenter.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { MESSAGE } from '../openapi/response-schemas.js';
import { arr, bool, obj } from '../openapi/schema.js';
import {
  CreateInstanceDto,
  ImChatQuery,
  ImChatThreadDto,
  ReconnectDto,
  SessionKeyDto,
  SessionsQuery,
  SetCustomNameDto,
  SetProactiveDto,
  StatusQuery,
  UpdateInstanceDto,
} from './channels.dto.js';
import { CHANNEL_INSTANCE, CHANNEL_PROVIDER, CHANNEL_STATUS, IM_SESSION } from './channels.schemas.js';
import { AppIdParams, ChannelInstanceParams } from '../common/path-params.js';

/** Channel instances (docs/api/channels.md): a chat platform's bot bound to a digital human. */
@ApiTags('Message channels')
@Controller('api/im-channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get('providers')
  @ApiOperation({
    summary: 'List the channel providers and the configuration fields each needs',
    description:
      "Each provider's `type`, display name, direction, `configFields` (key, label, type `string`/`secret`/`url`/`boolean`, required) and `defaultConfig`: enough to build a form for `POST /api/im-channels/instances`.",
  })
  @ApiData(arr(CHANNEL_PROVIDER))
  providers(): SuccessBody<ChannelProviderDto[]> {
    return ok(this.channels.listProviders());
  }

  @Get('instances')
  @ApiOperation({
    summary: 'List channel instances (credentials masked)',
    description:
      'Every instance with its binding (`appId`, `teamId`), reply scope, owners, guest policy and connection `state`/`reason`; `secret` config fields always read `"***"`.',
  })
  @ApiData(arr(CHANNEL_INSTANCE))
  async list(): Promise<SuccessBody<ChannelInstanceDto[]>> {
    return ok(await this.channels.listInstances());
  }

  @Post('instances')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Connect a chat platform account to a digital human',
    description:
      'Creates the instance (defaults: `replyScope: "all"`, `owners: []`, `guestPolicy: "chat-only"`, `enabled: true`) and starts its connection; answers it with credentials masked. 400 for an unknown `type` (`type must be one of …`), a missing required config field (`config.<key> is required`) or a bad field; 404 `App not found: <appId>`. Emits `im-channels:instance-updated`.',
  })
  @ApiData(CHANNEL_INSTANCE, 404)
  async create(@Body() body: CreateInstanceDto): Promise<SuccessBody<ChannelInstanceDto>> {
    return ok(await this.channels.createInstance(body));
  }

  @Patch('instances/:instanceId')
  @ApiOperation({
    summary: 'Change a channel instance ("***" keeps a credential)',
    description:
      'Changes only the fields given; in `config` a `"***"` or absent key keeps the stored value and `null` removes it. A changed config or `enabled` starts the instance afresh (reason cleared). 404 `Channel instance not found: <id>` or `App not found: <appId>`; 400 for a bad field. Emits `im-channels:instance-updated`.',
  })
  @ApiData(CHANNEL_INSTANCE)
  async update(
    @Param() { instanceId }: ChannelInstanceParams,
    @Body() body: UpdateInstanceDto,
  ): Promise<SuccessBody<ChannelInstanceDto>> {
    return ok(await this.channels.updateInstance(instanceId, body));
  }

  @Delete('instances/:instanceId')
  @ApiOperation({
    summary: 'Delete a channel instance and its threads list',
    description:
      'Its connection stops. 404 `Channel instance not found: <id>`. Emits `im-channels:instance-updated` with `instance: null`.',
  })
  @ApiDone()
  async remove(@Param() { instanceId }: ChannelInstanceParams): Promise<{ success: true }> {
    await this.channels.deleteInstance(instanceId);
    return { success: true };
  }

  @Get('status')
  @ApiOperation({
    summary: 'The connection state of every instance, or of one',
    description:
      '`[{id, type, enabled, connected, state, appId, appName, reason}]`; `connected` is true only for an enabled `online` instance. With `?instanceId`, just that one, else 404 `Channel instance not found: <id>`.',
  })
  @ApiData(arr(CHANNEL_STATUS), 404)
  async status(@Query() q: StatusQuery): Promise<SuccessBody<ChannelStatusDto[]>> {
    return ok(await this.channels.status(q.instanceId));
  }

  @Post('reconnect')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start an instance afresh (reconnect, clear an offline reason)',
    description:
      'A webhook-style instance is `online` again, a connection-style one goes `connecting` and reconnects (a disabled one stays `offline`); the reason is cleared. 404 `Channel instance not found: <id>`. Emits `im-channels:instance-updated`.',
  })
  @ApiDone(404)
  async reconnect(@Body() body: ReconnectDto): Promise<{ success: true }> {
    await this.channels.reconnect(body.instanceId);
    return { success: true };
  }
}

/** The chats of channel instances, each a thread of the digital human (docs/api/channels.md, "Threads"). */
@ApiTags('Message channels')
@Controller('api/im-sessions')
export class ImSessionsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get()
  @ApiOperation({
    summary: "List channel threads (all, or one digital human's)",
    description:
      "`[{appId, channel, instanceId, chatType, chatId, displayName, customName, proactive, lastMessageAt}]`; `?appId` keeps one digital human's threads.",
  })
  @ApiData(arr(IM_SESSION))
  async list(@Query() q: SessionsQuery): Promise<SuccessBody<ImSessionDto[]>> {
    return ok(await this.channels.sessions(q.appId));
  }

  @Post('set-proactive')
  @HttpCode(200)
  @ApiOperation({
    summary: "Mark a thread to receive the digital human's run results",
    description:
      "With `proactive: true` the thread gets each run's result (once per run) and a run's held tool calls; `false` stops that. 404 `No such channel thread` when `{appId, instanceId, chatId}` names no thread.",
  })
  @ApiDone(404)
  async setProactive(@Body() body: SetProactiveDto): Promise<{ success: true }> {
    await this.channels.setProactive(body, body.proactive);
    return { success: true };
  }

  @Post('set-custom-name')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Name a channel thread',
    description: 'Sets `customName` (trimmed; an empty name clears it). 404 `No such channel thread`.',
  })
  @ApiDone(404)
  async setCustomName(@Body() body: SetCustomNameDto): Promise<{ success: true }> {
    await this.channels.setCustomName(body, body.name);
    return { success: true };
  }

  @Post('remove')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Forget a channel thread (its conversation is kept)',
    description: 'Removes the thread from the list; its conversation and messages stay. 404 `No such channel thread`.',
  })
  @ApiDone(404)
  async remove(@Body() body: SessionKeyDto): Promise<{ success: true }> {
    await this.channels.removeSession(body);
    return { success: true };
  }
}

/** A digital human's channel threads, read and controlled over HTTP (never written to). */
@ApiTags('Message channels')
@Controller('api/apps/:appId/im-chat')
export class AppImChatController {
  constructor(private readonly channels: ChannelsService) {}

  @Get('messages')
  @ApiOperation({
    summary: "A channel thread's messages",
    description:
      'The messages of the thread named by `?instanceId&chatType&chatId`; `[]` when a parameter is missing or no such thread of this digital human exists. 404 `App not found: <appId>`.',
  })
  @ApiData(arr(MESSAGE))
  async messages(@Param() { appId }: AppIdParams, @Query() q: ImChatQuery): Promise<SuccessBody<MessageDto[]>> {
    return ok((await this.channels.threadMessages(appId, q.instanceId, q.chatType, q.chatId)).map(toMessageDto));
  }

  @Post('clear')
  @HttpCode(200)
  @ApiOperation({
    summary: "Stop a channel thread's turn and start it afresh",
    description:
      "Stops the thread's running turn and deletes its conversation, so the next message starts afresh (as `/clear` in the chat); nothing happens for an unknown thread. 404 `App not found: <appId>`.",
  })
  @ApiDone()
  async clear(@Param() { appId }: AppIdParams, @Body() body: ImChatThreadDto): Promise<{ success: true }> {
    await this.channels.clearThread(appId, body.instanceId, body.chatType, body.chatId);
    return { success: true };
  }

  @Post('stop')
  @HttpCode(200)
  @ApiOperation({
    summary: "Stop a channel thread's turn",
    description:
      "Stops the thread's running turn (as `/stop` in the chat). `{stopped: false}` when no such thread of this digital human exists. 404 `App not found: <appId>`.",
  })
  @ApiData(obj({ stopped: bool() }, ['stopped']))
  async stop(
    @Param() { appId }: AppIdParams,
    @Body() body: ImChatThreadDto,
  ): Promise<SuccessBody<{ stopped: boolean }>> {
    return ok({ stopped: await this.channels.stopThread(appId, body.instanceId, body.chatType, body.chatId) });
  }
}

const HOOK_REFUSAL_STATUS: Record<ChannelHookRefusal, number> = {
  'bad-signature': 401,
  'bad-body': 400,
  'unknown-instance': 404,
};

/** The raw bytes of any body up to 256 KB (the signature is over exactly these). */
const rawBody = express.raw({ type: () => true, limit: WEBHOOK_MAX_BYTES });

function readRaw(req: Request, res: Response): Promise<Buffer | 'too-large' | 'unreadable'> {
  return new Promise((resolve) => {
    rawBody(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string; status?: number };
        resolve(e.type === 'entity.too.large' || e.status === 413 ? 'too-large' : 'unreadable');
        return;
      }
      resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    });
  });
}

/**
 * Webhook-style channel transports (docs/api/channels.md): `POST /hooks/channels/<instanceId>`,
 * no access password; the instance's provider checks the platform's signature. Registered
 * before the webhook triggers' `/hooks/*path`.
 */
@ApiTags('Message channels')
@Controller('hooks/channels')
export class ChannelHooksController {
  constructor(private readonly channels: ChannelsService) {}

  @Post(':instanceId')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Deliver a platform message to a channel instance',
    description:
      'No access password; signed as the provider requires (the generic webhook: `X-Hub-Signature-256: ' +
      'sha256=<hmac>` of the raw body with the instance secret; Slack: `X-Slack-Signature: v0=<hmac of ' +
      '"v0:<X-Slack-Request-Timestamp>:<body>">` with the signing secret, within 5 minutes; Feishu: the ' +
      'verification token, and with an Encrypt Key `X-Lark-Signature` and the encrypted body), else 401. ' +
      "Answers `{ok: true, received: true}` (Slack's and Feishu's `url_verification`: `{challenge}`) " +
      'at once; the same platform message id starts at most one turn.',
  })
  async deliver(
    @Param() { instanceId }: ChannelInstanceParams,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const raw = await readRaw(req, res);
    if (raw === 'too-large') return sendFailure(res, 413, ErrorTexts.bodyTooLarge);
    if (raw === 'unreadable') return sendFailure(res, 400, 'Invalid request body');
    const outcome = await this.channels.receiveWebhook(instanceId, raw, req.headers);
    if (outcome.accepted) {
      res.status(200).json(outcome.response);
      return;
    }
    sendFailure(res, HOOK_REFUSAL_STATUS[outcome.refusal], outcome.error);
  }
}
