import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { IsInt, IsObject, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { EventBus } from '#core/ports/event-bus.port.js';
import { ServerHttpAdapter } from '../common/server-http-adapter.js';
import { ApiData } from '../openapi/api-data.js';
import { NULL_DATA } from '../openapi/response-schemas.js';
import { arr, str } from '../openapi/schema.js';
import type { EventChannel, EventMap } from '#contracts/events.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

class PublishEventDto {
  @IsString()
  @MinLength(1)
  channel: string;

  @IsObject()
  data: Record<string, unknown>;

  /** Publishes the event this many times (a flood without a request each). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  repeat?: number;
}

/**
 * Test-only operations, mounted only with SVC_TEST_HOOKS=1: lets end-to-end tests publish
 * an event through the real bus before any feature emits one. Still behind the token.
 */
@ApiTags('Testing')
@Controller('api/test')
export class TestHooksController {
  constructor(
    private readonly bus: EventBus,
    private readonly adapter: HttpAdapterHost,
  ) {}

  /** Every route the HTTP router holds, as `METHOD /path` (the OpenAPI completeness test reads it). */
  @Get('routes')
  @ApiOperation({
    summary: 'List the registered routes (tests only)',
    description:
      'Mounted only with SVC_TEST_HOOKS=1 (still behind the access password): answers every route the HTTP router holds as `METHOD /path`, for the OpenAPI completeness test.',
  })
  @ApiData(arr(str('METHOD /path')))
  routes(): SuccessBody<string[]> {
    const http = this.adapter.httpAdapter;
    // The controllers' routes live in the adapter's route table; any other route in Express's router.
    type Layer = { route?: { path: unknown; methods: Record<string, boolean> } };
    const app = http.getInstance() as { router: { stack: Layer[] } };
    const routes = app.router.stack.flatMap((layer) =>
      layer.route && typeof layer.route.path === 'string'
        ? Object.keys(layer.route.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path as string}`)
        : [],
    );
    const table = http instanceof ServerHttpAdapter ? http.routeTable.list() : [];
    return { success: true, data: [...table, ...routes] };
  }

  @Post('events')
  @ApiOperation({
    summary: 'Publish an event (tests only)',
    description:
      'Mounted only with SVC_TEST_HOOKS=1 (still behind the access password): publishes `data` on `channel` through the real event bus, `repeat` times (1 to 10,000, default 1), and answers `data: null`. 400 for a missing `channel` or a non-object `data`.',
  })
  @HttpCode(200)
  @ApiData(NULL_DATA)
  async publish(@Body() body: PublishEventDto): Promise<SuccessBody<null>> {
    // Any channel, the map's or not: the tests publish their own to probe delivery.
    const channel = body.channel as EventChannel;
    for (let i = 0; i < (body.repeat ?? 1); i++) await this.bus.publish(channel, body.data as EventMap[typeof channel]);
    return { success: true, data: null };
  }
}
