import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { FailureBody, SuccessBody } from '#contracts/errors.js';
import type {
  ApplyResultDto,
  CategoryTaxonomyDto,
  DiscoverPageDto,
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
  ApplyUpdateDto,
  DiscoverQueryDto,
  FindAppDto,
  IgnoreVersionDto,
  ImportPackageDto,
  PublishPreviewDto,
  StoreAppInstallDto,
  StoreInstallDto,
  StoreQueryDto,
  ToggleRegistryDto,
  UnpublishDto,
} from './store.dto.js';
import { toRegistrySourceDto } from './store.presenter.js';

const ok = <T>(data: T): SuccessBody<T> => ({ success: true, data });
const done = (): { success: true } => ({ success: true });

/** "Store operations" of spec doc 3. Routes with a fixed path come before `:slug`. */
@Controller('api/store')
export class StoreController {
  constructor(
    private readonly store: StoreService,
    private readonly packages: PackagesService,
  ) {}

  @Post('query')
  @HttpCode(200)
  async query(@Body() body: StoreQueryDto): Promise<SuccessBody<StoreQueryResultDto>> {
    return ok(await this.store.query(body));
  }

  /** Legacy, non-paginated list. */
  @Get('apps')
  async list(
    @Query('search') search?: string,
    @Query('locale') locale?: string,
    @Query('category') category?: string,
    @Query('type') type?: string,
    @Query('tags') tags?: string,
  ): Promise<SuccessBody<StoreListingDto[]>> {
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
  async detail(@Param('slug') slug: string, @Query('locale') locale?: string): Promise<SuccessBody<StoreDetailDto>> {
    return ok(await this.store.detail(slug, locale));
  }

  @Post('apps/:slug/install')
  @HttpCode(200)
  async installSlug(
    @Param('slug') slug: string,
    @Body() body: StoreAppInstallDto,
  ): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.store.install({ slug, ...installPlace(body), userConfig: body.userConfig });
    return ok({ appId: app.id });
  }

  @Post('install')
  @HttpCode(200)
  async install(@Body() body: StoreInstallDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.store.install({ slug: body.slug, ...installPlace(body), userConfig: body.userConfig });
    return ok({ appId: app.id });
  }

  @Get('app-document')
  async appDocument(@Query('slug') slug?: string): Promise<SuccessBody<{ content: string | null }>> {
    return ok(await this.store.appDocument(slug ?? ''));
  }

  @Get('capabilities')
  capabilities(): SuccessBody<StoreCapabilitiesDto> {
    return ok(this.store.capabilities());
  }

  @Get('category-taxonomy')
  categoryTaxonomy(): SuccessBody<CategoryTaxonomyDto> {
    return ok(this.store.categoryTaxonomy());
  }

  @Get('discover-page')
  async discoverPage(@Query() q: DiscoverQueryDto): Promise<SuccessBody<DiscoverPageDto>> {
    return ok(await this.store.discoverPage(q.locale, q.pageSize));
  }

  @Post('revalidate')
  @HttpCode(200)
  async revalidate(): Promise<SuccessBody<{ changed: boolean }>> {
    return ok({ changed: await this.store.revalidate() });
  }

  @Post('refresh')
  @HttpCode(200)
  async refresh(): Promise<{ success: true }> {
    await this.store.refresh();
    return done();
  }

  // ── sources ──

  @Get('registries')
  async registries(): Promise<SuccessBody<RegistrySourceDto[]>> {
    return ok((await this.store.listSources()).map(toRegistrySourceDto));
  }

  @Post('registries')
  @HttpCode(200)
  async addRegistry(@Body() body: AddRegistryDto): Promise<SuccessBody<RegistrySourceDto>> {
    return ok(toRegistrySourceDto(await this.store.addSource(body)));
  }

  /** A built-in source answers `{success:false, error}` with 200: an error, not an exception (spec). */
  @Delete('registries/:registryId')
  async deleteRegistry(@Param('registryId') id: string): Promise<{ success: true } | FailureBody> {
    const refused = await this.store.deleteSource(id);
    return refused === null ? done() : { success: false, error: refused };
  }

  @Post('registries/:registryId/toggle')
  @HttpCode(200)
  async toggle(@Param('registryId') id: string, @Body() body: ToggleRegistryDto): Promise<{ success: true }> {
    await this.store.toggleSource(id, body.enabled);
    return done();
  }

  /** Write-only: the config is merged (null deletes a key) and never echoed. */
  @Patch('registries/:registryId/adapter-config')
  async adapterConfig(@Param('registryId') id: string, @Body() body: unknown): Promise<{ success: true }> {
    await this.store.patchAdapterConfig(id, body);
    return done();
  }

  // ── updates ──

  @Get('updates')
  async updates(): Promise<SuccessBody<UpdateItemDto[]>> {
    return ok(await this.store.updates());
  }

  @Post('updates/check-now')
  @HttpCode(200)
  async checkNow(): Promise<SuccessBody<UpdateItemDto[]>> {
    return ok(await this.store.checkNow());
  }

  @Post('updates/:appId/apply')
  @HttpCode(200)
  async apply(@Param('appId') appId: string, @Body() body: ApplyUpdateDto): Promise<SuccessBody<ApplyResultDto>> {
    return ok(await this.store.apply(appId, body.mode ?? 'force'));
  }

  @Post('ignore-version')
  @HttpCode(200)
  async ignoreVersion(@Body() body: IgnoreVersionDto): Promise<SuccessBody<null>> {
    await this.store.ignoreVersion(body.appId, body.version);
    return ok(null);
  }

  // ── packages ──

  @Post('import-dhpkg')
  @HttpCode(200)
  async importPackage(@Body() body: ImportPackageDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.packages.import(body.filePath, body.spaceId);
    return ok({ appId: app.id });
  }

  // ── publishing ──

  @Get('my-publications')
  myPublications(): never {
    return this.store.myPublications();
  }

  @Post('unpublish')
  @HttpCode(200)
  unpublish(@Body() body: UnpublishDto): never {
    return this.store.unpublish(body.slug);
  }

  @Post('publish/preview')
  @HttpCode(200)
  async publishPreview(
    @Body() body: PublishPreviewDto,
  ): Promise<SuccessBody<{ slug: string; localVersion: string; storeVersion: string | null }>> {
    return ok(await this.store.publishPreview(body));
  }

  @Post('publish/find-app')
  @HttpCode(200)
  async findApp(@Body() body: FindAppDto): Promise<SuccessBody<{ appId: string | null }>> {
    return ok(await this.store.publishFindApp(body));
  }
}

/** `GET /api/skills/command-name`: a slash-command name from a title. */
@Controller('api/skills')
export class SkillNamesController {
  constructor(private readonly store: StoreService) {}

  @Get('command-name')
  commandName(@Query('name') name?: string): SuccessBody<string> {
    return ok(this.store.commandName(name));
  }
}

/**
 * `GET /api/apps/:appId/export`: the package as a download (`application/zip`,
 * `Content-Disposition: attachment; filename="<slug>-<version>.dhpkg"`; a skill app gives a `.zip`).
 */
@Controller('api/apps')
export class AppExportController {
  constructor(private readonly packages: PackagesService) {}

  @Get(':appId/export')
  async export(@Param('appId') appId: string, @Res() res: Response): Promise<void> {
    const pkg = await this.packages.export(appId);
    res.status(200);
    res.setHeader('Content-Type', 'application/zip');
    res.setHeader('Content-Disposition', `attachment; filename="${pkg.fileName}"`);
    res.setHeader('Content-Length', String(pkg.data.byteLength));
    res.end(Buffer.from(pkg.data));
  }
}

/** Absent stays absent (every workspace); null and a workspace id are passed on as sent. */
function installPlace(body: StoreAppInstallDto): { spaceId?: string | null } {
  return 'spaceId' in body && body.spaceId !== undefined ? { spaceId: body.spaceId } : {};
}
