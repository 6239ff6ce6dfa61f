import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { IsInt, IsObject, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { EventBus } from '#core/ports/event-bus.port.js';

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
@Controller('api/test')
export class TestHooksController {
  constructor(private readonly bus: EventBus) {}

  @Post('events')
  @HttpCode(200)
  async publish(@Body() body: PublishEventDto): Promise<{ success: true; data: null }> {
    for (let i = 0; i < (body.repeat ?? 1); i++) await this.bus.publish(body.channel, body.data);
    return { success: true, data: null };
  }
}
