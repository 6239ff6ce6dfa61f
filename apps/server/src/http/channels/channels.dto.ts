import { IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { ArrayBodyAsEmpty, Check, QueryDto } from '../common/validation.js';

/**
 * Request bodies and queries of the Message channels operations (docs/api/channels.md). Shapes
 * are checked here (400); what the fields may hold (a provider's config, the app) by core.
 */

const nonBlank = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

@ArrayBodyAsEmpty()
export class CreateInstanceDto {
  @Check(nonBlank, 'type is required', {
    type: 'string',
    description: 'A provider type (GET /api/im-channels/providers)',
  })
  type: string;

  @Check(nonBlank, 'name is required', { type: 'string' })
  @MaxLength(200)
  name: string;

  @Check(nonBlank, 'appId is required', { type: 'string' })
  appId: string;

  @IsOptional()
  @IsString()
  teamId?: string;

  @IsObject()
  config: Record<string, unknown>;

  @IsOptional()
  @IsIn(['all', 'group', 'direct'])
  replyScope?: string;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  owners?: string[];

  @IsOptional()
  @IsIn(['deny', 'chat-only'])
  guestPolicy?: string;

  @IsOptional()
  @IsBoolean()
  streaming?: boolean;

  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

@ArrayBodyAsEmpty()
export class UpdateInstanceDto {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @IsOptional()
  @IsString()
  appId?: string;

  @IsOptional()
  @IsString()
  teamId?: string;

  /** Merged into the stored config: `***` or an absent key keeps a credential, null removes a key. */
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;

  @IsOptional()
  @IsIn(['all', 'group', 'direct'])
  replyScope?: string;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  owners?: string[];

  @IsOptional()
  @IsIn(['deny', 'chat-only'])
  guestPolicy?: string;

  @IsOptional()
  @IsBoolean()
  streaming?: boolean;

  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

@ArrayBodyAsEmpty()
export class ReconnectDto {
  @Check(nonBlank, 'instanceId is required', { type: 'string' })
  instanceId: string;
}

@QueryDto()
export class StatusQuery {
  @IsOptional()
  @IsString()
  instanceId?: string;
}

@QueryDto()
export class SessionsQuery {
  @IsOptional()
  @IsString()
  appId?: string;
}

@ArrayBodyAsEmpty()
export class SessionKeyDto {
  @Check(nonBlank, 'appId is required', { type: 'string' })
  appId: string;

  @Check(nonBlank, 'instanceId is required', { type: 'string' })
  instanceId: string;

  @Check(nonBlank, 'chatId is required', { type: 'string' })
  chatId: string;
}

@ArrayBodyAsEmpty()
export class SetProactiveDto extends SessionKeyDto {
  @Check((v) => typeof v === 'boolean', 'proactive must be a boolean', { type: 'boolean' })
  proactive: boolean;
}

@ArrayBodyAsEmpty()
export class SetCustomNameDto extends SessionKeyDto {
  @Check((v) => typeof v === 'string', 'name must be a string', { type: 'string' })
  @MaxLength(200)
  name: string;
}

@QueryDto()
export class ImChatQuery {
  @IsOptional()
  @IsString()
  instanceId?: string;

  @IsOptional()
  @IsIn(['direct', 'group'])
  chatType?: string;

  @IsOptional()
  @IsString()
  chatId?: string;
}

@ArrayBodyAsEmpty()
export class ImChatThreadDto {
  @IsOptional()
  @IsString()
  instanceId?: string;

  @IsOptional()
  @IsIn(['direct', 'group'])
  chatType?: string;

  @IsOptional()
  @IsString()
  chatId?: string;
}
