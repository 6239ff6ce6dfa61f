import { JSONSchema } from 'class-validator-jsonschema';
import { IsDefined, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { UPGRADE_STRATEGIES, type UpgradeStrategy } from '#contracts/apps.js';
import { SPEC_YAML_MAX_CHARS } from '#core/kernel/app-spec/spec-yaml.js';
import { ArrayBodyAsEmpty, Check, Documented, ImagesField, OpenBody, QueryDto } from '../common/validation.js';

/**
 * Request bodies of "App (digital human) operations". The shapes are checked here (400);
 * what a spec or a setting may hold is checked by core (422 VALIDATION_FAILED).
 */

/** `spaceId`: a space id, null or absent for a global install. */
export class InstallAppDto {
  @IsDefined()
  @IsObject()
  spec: Record<string, unknown>;

  @IsOptional()
  @IsString()
  @JSONSchema({ type: ['string', 'null'], description: 'A space id; null or absent: a global install' })
  spaceId?: string | null;

  @IsOptional()
  @IsObject()
  userConfig?: Record<string, unknown>;

  /**
   * Skill files to install with it, by package path: a skill app's own at the root
   * (`SKILL.md`, ...), a digital human's bundled skills under `skills/<id>/`. Each value is the
   * file's text or `{base64}`.
   */
  @IsOptional()
  @IsObject()
  files?: Record<string, unknown>;
}

export class ImportSpecDto {
  @IsOptional()
  @IsString()
  spaceId?: string | null;

  @IsString()
  @MaxLength(SPEC_YAML_MAX_CHARS)
  yamlContent: string;

  @IsOptional()
  @IsObject()
  userConfig?: Record<string, unknown>;
}

/** `spaceId` is required: a space id, or null to make the app global. */
export class MoveSpaceDto {
  @ValidateIf((body: MoveSpaceDto) => body.spaceId !== null)
  @IsString()
  spaceId: string | null;
}

export class UpgradeStrategyDto {
  @IsIn(UPGRADE_STRATEGIES)
  strategy: UpgradeStrategy;
}

export class FrequencyDto {
  @IsString()
  subscriptionId: string;

  @IsString()
  frequency: string;
}

export class PermissionDto {
  @IsString()
  permission: string;
}

/* Bodies of "Chat" and "Runs" (docs/api/digital-humans.md); the texts are the ones it fixes. */

const nonBlank = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';
const isString = (value: unknown): boolean => typeof value === 'string';
const required = (field: string): string => `${field} is required and must be a string`;

@ArrayBodyAsEmpty()
export class AppChatSendDto {
  @Check(nonBlank, required('spaceId'), { type: 'string' })
  spaceId: string;

  @Check(nonBlank, required('message'), { type: 'string' })
  message: string;

  /** null is refused too (only absent means "the default"). */
  @Check((v) => v === undefined || typeof v === 'boolean', 'thinkingEnabled must be a boolean', { type: 'boolean' })
  thinkingEnabled?: boolean;

  @IsOptional()
  @Check(isString, 'conversationId must be a string', {
    type: 'string',
    description: 'A thread id of your choosing; the default thread when omitted',
  })
  conversationId?: string | null;

  @ImagesField()
  images?: unknown[] | null;
}

@ArrayBodyAsEmpty()
export class AppChatClearDto {
  @Check(nonBlank, required('spaceId'), { type: 'string' })
  spaceId: string;
}

@ArrayBodyAsEmpty()
export class InjectDto {
  @Check(nonBlank, required('text'), { type: 'string' })
  text: string;
}

/** One of the two, not blank, is required (checked by the service). */
@ArrayBodyAsEmpty()
export class EscalationResponseDto {
  @IsOptional()
  @Check(isString, 'choice must be a string', { type: 'string' })
  choice?: string | null;

  @IsOptional()
  @Check(isString, 'text must be a string', { type: 'string' })
  text?: string | null;
}

/* Query parameters (docs/api/digital-humans.md); read as given, judged by the service. */

@QueryDto()
export class AppListQuery {
  @Documented({ type: 'string', description: 'Only the apps of this space' })
  spaceId?: string;

  @Documented({
    type: 'string',
    description: 'Only the apps with this status (uninstalled ones are left out unless asked)',
  })
  status?: string;
}

@QueryDto()
export class UninstallQuery {
  @Documented({ type: 'boolean', description: "true also deletes the app's data folder" })
  purge?: string;
}

@QueryDto()
export class ActivityQuery {
  @Documented({ type: 'integer', minimum: 1, description: 'At most this many entries' })
  limit?: string;

  @Documented({ type: 'number', description: 'Epoch ms: only entries before it (pages back)' })
  before?: string;
}

/**
 * A digital human's whole configuration (full replacement): its keys are the settings of the
 * spec's `config_schema`, which core judges (422 naming the setting).
 */
@OpenBody({
  description: "The digital human's whole configuration object (full replacement), keys per its spec's config_schema",
})
export class AppConfigDto {
  [setting: string]: unknown;
}

/**
 * A JSON Merge Patch (RFC 7386) of the spec's top-level fields (`null` deletes one); core
 * refuses a body that is not a JSON object (400) and validates the merged spec (422).
 */
@OpenBody({
  description: "A JSON Merge Patch of the spec's top-level fields (`null` deletes one; `type` cannot change)",
})
export class SpecPatchDto {
  [field: string]: unknown;

  @Documented({ type: ['string', 'null'] })
  display_name?: unknown;

  @Documented({ type: ['string', 'null'] })
  description?: unknown;

  @Documented({ type: ['string', 'null'] })
  system_prompt?: unknown;

  @Documented({ type: ['array', 'null'], items: { type: 'object', additionalProperties: true } })
  subscriptions?: unknown;
}

/**
 * A JSON Merge Patch of the user's overrides (`null` deletes a key); core refuses a body that
 * is not a JSON object (400) and checks the result (422 naming the key).
 */
@OpenBody({ description: "A JSON Merge Patch of the user's overrides (`null` deletes a key)" })
export class OverridesPatchDto {
  [key: string]: unknown;

  @Documented({ type: ['string', 'null'], enum: ['all', 'important', 'none', null] })
  notificationLevel?: unknown;

  @Documented({ type: ['string', 'null'], description: 'The model source to run the digital human with' })
  modelSourceId?: unknown;

  @Documented({ type: ['string', 'null'], description: 'The model to run the digital human with' })
  modelId?: unknown;

  @Documented({ type: ['array', 'null'], items: { type: 'string' }, description: 'Tools it may not use' })
  disabledTools?: unknown;

  @Documented({ type: ['object', 'null'], additionalProperties: true, description: 'Memory settings' })
  memory?: unknown;
}
