import { IsDefined, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { UPGRADE_STRATEGIES, type UpgradeStrategy } from '#contracts/apps.js';
import { SPEC_YAML_MAX_CHARS } from '#core/kernel/app-spec/spec-yaml.js';

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
