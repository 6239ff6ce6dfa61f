import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Min, ValidateIf } from 'class-validator';
import { APPLY_MODES, type ApplyMode, STORE_ENTRY_TYPES } from '#contracts/store.js';
import { Documented, OpenBody, QueryDto } from '../common/validation.js';

/**
 * Request bodies of "Store operations". Shapes are checked here (400 naming the field);
 * what the values mean is checked by core.
 */

export class StoreQueryDto {
  @IsOptional()
  @IsString()
  search?: string;

  @IsOptional()
  @IsIn(STORE_ENTRY_TYPES)
  type?: string;

  @IsOptional()
  @IsString()
  category?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  page?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  pageSize?: number;

  @IsOptional()
  @IsString()
  locale?: string;
}

/** `spaceId`: a workspace id; absent installs for every workspace; null is a deliberate global install of a skill or MCP app. */
export class StoreAppInstallDto {
  @IsOptional()
  @ValidateIf((b: StoreAppInstallDto) => b.spaceId !== null)
  @IsString()
  spaceId?: string | null;

  @IsOptional()
  @IsObject()
  userConfig?: Record<string, unknown>;
}

export class StoreInstallDto extends StoreAppInstallDto {
  @IsString()
  slug: string;
}

export class IgnoreVersionDto {
  @IsString()
  appId: string;

  @IsString()
  version: string;
}

export class ImportPackageDto {
  /** A .dhpkg, .zip, spec.yaml or folder on the computer running the service. */
  @IsString()
  filePath: string;

  @IsOptional()
  @ValidateIf((b: ImportPackageDto) => b.spaceId !== null)
  @IsString()
  spaceId?: string | null;

  /** Settings of the package's `config_schema` (required ones must be given, as for install). */
  @IsOptional()
  @IsObject()
  userConfig?: Record<string, unknown>;
}

export class AddRegistryDto {
  @IsString()
  name: string;

  @IsString()
  url: string;

  @IsOptional()
  @IsString()
  sourceType?: string;

  @IsOptional()
  @IsObject()
  adapterConfig?: Record<string, unknown>;
}

export class ToggleRegistryDto {
  @IsBoolean()
  enabled: boolean;
}

export class ApplyUpdateDto {
  @IsOptional()
  @IsIn(APPLY_MODES)
  mode?: ApplyMode;

  /** Settings given again, for a version that sends them to a new address (docs/api/store-and-packages.md). */
  @IsOptional()
  @IsObject()
  settings?: Record<string, unknown>;
}

export class UnpublishDto {
  @IsString()
  slug: string;
}

export class FindAppDto {
  @IsString()
  slug: string;

  @IsOptional()
  @IsString()
  type?: string;

  @IsOptional()
  @IsString()
  author?: string;
}

export class PublishPreviewDto {
  @IsString()
  appId: string;

  @IsOptional()
  @IsString()
  author?: string;

  /** Overrides the store name before the slug is derived. */
  @IsOptional()
  @IsString()
  name?: string;
}

@QueryDto()
export class DiscoverQueryDto {
  @IsOptional()
  @IsString()
  locale?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  pageSize?: number;
}

/* Query parameters of the legacy list, a detail, the app document and command names; read as given. */

@QueryDto()
export class StoreListQuery {
  @Documented({ type: 'string', description: 'Text to look for in names and descriptions' })
  search?: string;

  @Documented({ type: 'string' })
  locale?: string;

  @Documented({ type: 'string' })
  category?: string;

  @Documented({ type: 'string', description: 'An entry type' })
  type?: string;

  @Documented({ type: 'string', description: 'Comma-separated tags' })
  tags?: string;
}

@QueryDto()
export class LocaleQuery {
  @Documented({ type: 'string' })
  locale?: string;
}

@QueryDto()
export class AppDocumentQuery {
  @Documented({ type: 'string', description: "The entry's slug" })
  slug?: string;
}

@QueryDto()
export class CommandNameQuery {
  @Documented({ type: 'string', description: 'A title to make a slash-command name from' })
  name?: string;
}

/**
 * Flat keys merged into a Store source's adapter configuration (`null` deletes a key), e.g.
 * Smithery's `apiKey` or a dhp-v2 creator `token`; core names a key whose value is not a
 * string, number or boolean (400), after the source lookup (404).
 */
@OpenBody({
  description: "Flat keys merged into the source's adapter configuration (`null` deletes a key); never echoed",
})
export class AdapterConfigPatchDto {
  [key: string]: unknown;

  @Documented({ type: ['string', 'null'], description: "Smithery's API key" })
  apiKey?: unknown;

  @Documented({ type: ['string', 'null'], description: 'A dhp-v2 creator token' })
  token?: unknown;
}
