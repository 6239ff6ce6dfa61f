import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { FailureBody, SuccessBody } from '#contracts/errors.js';
import type {
  ApplyResultDto,
  CategoryTaxonomyDto,
  DiscoverPageDto,
  PublicationDto,
  RegistrySourceDto,
  StoreCapabilitiesDto,
  StoreDetailDto,
  StoreListingDto,
  StoreQueryResultDto,
  UpdateItemDto,
} from '#contracts/store.js';
import { PackagesService } from '#core/store/packages.service.js';
import { StoreService } from '#core/store/store.service.js';
import {
  AddRegistryDto,
  AppDocumentQuery,
  ApplyUpdateDto,
  CommandNameQuery,
  DiscoverQueryDto,
  FindAppDto,
  IgnoreVersionDto,
  ImportPackageDto,
  LocaleQuery,
  PublishPreviewDto,
  StoreAppInstallDto,
  StoreInstallDto,
  StoreListQuery,
  StoreQueryDto,
  ToggleRegistryDto,
  UnpublishDto,
} from './store.dto.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import { Relayed } from '../assistant-api/relayed.js';
import { ApiBytes, ApiData, ApiDone, ApiDoneOrFailure } from '../openapi/api-data.js';
import { APP_ID, NULL_DATA } from '../openapi/response-schemas.js';
import { InstallAppDto } from '../apps/apps.dto.js';
import { arr, str } from '../openapi/schema.js';
import { toRegistrySourceDto } from './store.presenter.js';
import {
  APPLY_RESULT,
  CATEGORY_TAXONOMY,
  CHANGED,
  DISCOVER_PAGE,
  DOCUMENT,
  FOUND_APP,
  PUBLICATION,
  PUBLISH_PREVIEW,
  REGISTRY_SOURCE,
  STORE_CAPABILITIES,
  STORE_DETAIL,
  STORE_LISTING,
  STORE_QUERY_RESULT,
  UPDATE_ITEM,
} from './store.schemas.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

const done = (): { success: true } => ({ success: true });

/** The Store operations (docs/api/store-and-packages.md). Routes with a fixed path come before `:slug`. */
@ApiTags('Store')
@Controller('api/store')
export class StoreController {
  constructor(
    private readonly store: StoreService,
    private readonly packages: PackagesService,
  ) {}

  @Post('query')
  @ApiOperation({
    summary: 'Browse the Store (paginated)',
    description: 'The primary browse operation; every filter optional.',
  })
  @Assistant()
  @ApiData(STORE_QUERY_RESULT)
  @HttpCode(200)
  async query(@Body() body: StoreQueryDto): Promise<SuccessBody<StoreQueryResultDto>> {
    return ok(await this.store.query(body));
  }

  /** Legacy, non-paginated list. */
  @Get('apps')
  @ApiOperation({ summary: 'List Store entries (legacy, not paginated)' })
  @Assistant()
  @ApiData(arr(STORE_LISTING))
  async list(@Query() query: StoreListQuery): Promise<SuccessBody<StoreListingDto[]>> {
    const { search, locale, category, type, tags } = query;
    const tagList = tags
      ? tags
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== '')
      : undefined;
    return ok(
      await this.store.list({
        ...(search ? { search } : {}),
        ...(locale ? { locale } : {}),
        ...(category ? { category } : {}),
        ...(type ? { type } : {}),
        ...(tagList ? { tags: tagList } : {}),
      }),
    );
  }

  /** A scoped slug (`author/id`) is sent with its slash encoded as %2F. */
  @Get('apps/:slug')
  @ApiOperation({ summary: 'Read a Store entry with its spec' })
  @Assistant()
  @ApiData(STORE_DETAIL, 503)
  async detail(@Param('slug') slug: string, @Query() query: LocaleQuery): Promise<SuccessBody<StoreDetailDto>> {
    return ok(await this.store.detail(slug, query.locale));
  }

  @Post('apps/:slug/install')
  @ApiOperation({ summary: 'Install a Store entry by its slug' })
  @Assistant()
  @ApiData(APP_ID, 403, 409, 422, 503)
  @HttpCode(200)
  async installSlug(
    @Param('slug') slug: string,
    @Body() body: StoreAppInstallDto,
  ): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.store.install({ slug, ...installPlace(body), userConfig: body.userConfig });
    return ok({ appId: app.id });
  }

  @Post('install')
  @ApiOperation({ summary: 'Install a Store entry' })
  @Assistant()
  @ApiData(APP_ID, 403, 404, 409, 422, 503)
  @HttpCode(200)
  async install(@Body() body: StoreInstallDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.store.install({ slug: body.slug, ...installPlace(body), userConfig: body.userConfig });
    return ok({ appId: app.id });
  }

  @Get('app-document')
  @ApiOperation({ summary: "Read a Store entry's document" })
  @Assistant()
  @ApiData(DOCUMENT, 400, 404, 503)
  async appDocument(@Query() query: AppDocumentQuery): Promise<SuccessBody<{ content: string | null }>> {
    return ok(await this.store.appDocument(query.slug ?? ''));
  }

  @Get('capabilities')
  @ApiOperation({ summary: "Read the Store's capabilities" })
  @Assistant()
  @ApiData(STORE_CAPABILITIES)
  async capabilities(): Promise<SuccessBody<StoreCapabilitiesDto>> {
    return ok(await this.store.capabilities());
  }

  @Get('category-taxonomy')
  @ApiOperation({ summary: "Read the Store's category taxonomy" })
  @Assistant()
  @ApiData(CATEGORY_TAXONOMY)
  async categoryTaxonomy(): Promise<SuccessBody<CategoryTaxonomyDto>> {
    return ok(await this.store.categoryTaxonomy());
  }

  @Get('discover-page')
  @ApiOperation({ summary: "Read the Store's discover page" })
  @Assistant()
  @ApiData(DISCOVER_PAGE, 400)
  async discoverPage(@Query() q: DiscoverQueryDto): Promise<SuccessBody<DiscoverPageDto>> {
    return ok(await this.store.discoverPage(q.locale, q.pageSize));
  }

  @Post('revalidate')
  @ApiOperation({ summary: 'Revalidate the Store indexes' })
  @Assistant()
  @ApiData(CHANGED)
  @HttpCode(200)
  async revalidate(): Promise<SuccessBody<{ changed: boolean }>> {
    return ok({ changed: await this.store.revalidate() });
  }

  @Post('refresh')
  @ApiOperation({ summary: 'Download every Store index again' })
  @Assistant()
  @ApiDone()
  @HttpCode(200)
  async refresh(): Promise<{ success: true }> {
    await this.store.refresh();
    return done();
  }

  // ── sources ──

  @Get('registries')
  @ApiOperation({ summary: 'List Store sources' })
  @Assistant()
  @ApiData(arr(REGISTRY_SOURCE))
  async registries(): Promise<SuccessBody<RegistrySourceDto[]>> {
    return ok((await this.store.listSources()).map(toRegistrySourceDto));
  }

  @Post('registries')
  @ApiOperation({ summary: 'Add a Store source' })
  @Assistant()
  @ApiData(REGISTRY_SOURCE, 409)
  @HttpCode(200)
  async addRegistry(@Body() body: AddRegistryDto): Promise<SuccessBody<RegistrySourceDto>> {
    return ok(toRegistrySourceDto(await this.store.addSource(body)));
  }

  /** A built-in source answers `{success:false, error}` with 200: an error, not an exception (docs/api.md, "Answers and errors"). */
  @Delete('registries/:registryId')
  @ApiOperation({ summary: 'Remove a Store source' })
  @Assistant()
  @ApiDoneOrFailure()
  async deleteRegistry(@Param('registryId') id: string): Promise<{ success: true } | FailureBody> {
    const refused = await this.store.deleteSource(id);
    return refused === null ? done() : { success: false, error: refused };
  }

  @Post('registries/:registryId/toggle')
  @ApiOperation({ summary: 'Turn a Store source on or off' })
  @Assistant()
  @ApiDone()
  @HttpCode(200)
  async toggle(@Param('registryId') id: string, @Body() body: ToggleRegistryDto): Promise<{ success: true }> {
    await this.store.toggleSource(id, body.enabled);
    return done();
  }

  /** Write-only: the config is merged (null deletes a key) and never echoed. */
  @Patch('registries/:registryId/adapter-config')
  @ApiOperation({ summary: "Set a Store source's adapter configuration (write-only)" })
  @Assistant()
  @ApiDone(400)
  async adapterConfig(@Param('registryId') id: string, @Body() body: unknown): Promise<{ success: true }> {
    await this.store.patchAdapterConfig(id, body);
    return done();
  }

  // ── updates ──

  @Get('updates')
  @ApiOperation({ summary: 'List available updates' })
  @Assistant()
  @ApiData(arr(UPDATE_ITEM))
  async updates(): Promise<SuccessBody<UpdateItemDto[]>> {
    return ok(await this.store.updates());
  }

  @Post('updates/check-now')
  @ApiOperation({ summary: 'Check for updates now' })
  @Assistant()
  @ApiData(arr(UPDATE_ITEM))
  @HttpCode(200)
  async checkNow(): Promise<SuccessBody<UpdateItemDto[]>> {
    return ok(await this.store.checkNow());
  }

  @Post('updates/:appId/apply')
  @ApiOperation({ summary: 'Apply an update to an installed digital human' })
  @Assistant()
  @ApiData(APPLY_RESULT, 409, 422, 503)
  @HttpCode(200)
  async apply(@Param('appId') appId: string, @Body() body: ApplyUpdateDto): Promise<SuccessBody<ApplyResultDto>> {
    return ok(await this.store.apply(appId, body.mode ?? 'force', body.settings));
  }

  @Post('ignore-version')
  @ApiOperation({ summary: 'Ignore one version of an update' })
  @Assistant()
  @ApiData(NULL_DATA, 404, 409)
  @HttpCode(200)
  async ignoreVersion(@Body() body: IgnoreVersionDto): Promise<SuccessBody<null>> {
    await this.store.ignoreVersion(body.appId, body.version);
    return ok(null);
  }

  // ── packages ──

  @Post('import-dhpkg')
  @ApiOperation({ summary: 'Install a digital human from a package file (.dhpkg) on the server' })
  @Assistant()
  @ApiData(APP_ID, 403, 404, 409, 422, 503)
  @HttpCode(200)
  async importPackage(
    @Body() body: ImportPackageDto,
    @Relayed() relayed: boolean,
  ): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.packages.import(
      body.filePath,
      body.spaceId,
      relayed ? 'assistant' : 'user',
      body.userConfig,
    );
    return ok({ appId: app.id });
  }

  // ── publishing ──

  @Get('my-publications')
  @ApiOperation({ summary: "List the signed-in creator's publications" })
  @Assistant()
  @ApiData(arr(PUBLICATION), 403, 503)
  async myPublications(): Promise<SuccessBody<PublicationDto[]>> {
    return ok(await this.store.myPublications());
  }

  @Post('unpublish')
  @ApiOperation({ summary: 'Unpublish a Store entry' })
  @Assistant()
  @ApiData(NULL_DATA, 400, 403, 404, 503)
  @HttpCode(200)
  async unpublish(@Body() body: UnpublishDto): Promise<SuccessBody<null>> {
    await this.store.unpublish(body.slug);
    return ok(null);
  }

  @Post('publish/preview')
  @ApiOperation({ summary: 'Preview publishing an installed app' })
  @Assistant()
  @ApiData(PUBLISH_PREVIEW, 404)
  @HttpCode(200)
  async publishPreview(
    @Body() body: PublishPreviewDto,
  ): Promise<SuccessBody<{ slug: string; localVersion: string; storeVersion: string | null }>> {
    return ok(await this.store.publishPreview(body));
  }

  @Post('publish/find-app')
  @ApiOperation({ summary: 'Find the installed app a Store slug matches' })
  @Assistant()
  @ApiData(FOUND_APP)
  @HttpCode(200)
  async findApp(@Body() body: FindAppDto): Promise<SuccessBody<{ appId: string | null }>> {
    return ok(await this.store.publishFindApp(body));
  }
}

/** `GET /api/skills/command-name`: a slash-command name from a title. */
@ApiTags('Store')
@Controller('api/skills')
export class SkillNamesController {
  constructor(private readonly store: StoreService) {}

  @Get('command-name')
  @ApiOperation({ summary: 'Derive a slash-command name from a title' })
  @Assistant()
  @ApiData(str())
  commandName(@Query() query: CommandNameQuery): SuccessBody<string> {
    return ok(this.store.commandName(query.name));
  }
}

/**
 * `POST /api/apps/install` (with its skill files, installed like import and the Store install
 * them: hence here, beside the packages) and `GET /api/apps/:appId/export`: the package (a zip archive) as a download (`application/octet-stream`,
 * `Content-Disposition: attachment; filename="<slug>-<version>.dhpkg"`; a skill app gives a `.zip`).
 */
@ApiTags('Digital humans')
@Controller('api/apps')
export class AppExportController {
  constructor(private readonly packages: PackagesService) {}

  @Post('install')
  @ApiOperation({ summary: 'Install a digital human from a spec' })
  @HttpCode(200)
  @ApiData(APP_ID, 403, 409, 422, 503)
  async install(@Body() body: InstallAppDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.packages.installGiven(body);
    return { success: true, data: { appId: app.id } };
  }

  @Get(':appId/export')
  @ApiOperation({ summary: 'Export an installed digital human as a package (.dhpkg)' })
  @ApiBytes('application/octet-stream', 404, 413)
  async export(@Param('appId') appId: string, @Res() res: Response): Promise<void> {
    const pkg = await this.packages.export(appId);
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Disposition', `attachment; filename="${pkg.fileName}"`);
    res.setHeader('Content-Length', String(pkg.data.byteLength));
    res.end(Buffer.from(pkg.data));
  }
}

/** Absent stays absent (every workspace); null and a workspace id are passed on as sent. */
function installPlace(body: StoreAppInstallDto): { spaceId?: string | null } {
  return 'spaceId' in body && body.spaceId !== undefined ? { spaceId: body.spaceId } : {};
}
