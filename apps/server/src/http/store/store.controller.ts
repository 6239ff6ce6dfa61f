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
  AdapterConfigPatchDto,
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
import { AppIdParams, RegistryIdParams, StoreSlugParams } from '../common/path-params.js';

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
  @ApiOperation({
    summary: 'List Store entries (legacy, not paginated)',
    description:
      'The entries of `POST /api/store/query` without paging: `search`, `locale`, `category`, `type` and `tags` (comma-separated, any one matches) filter them. A slug listed by two sources is served from the first.',
  })
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
  @ApiOperation({
    summary: 'Read a Store entry with its spec',
    description:
      'Answers `{entry, spec, registryId}`, the item\'s `spec.yaml` fetched from its source; `locale` picks the entry\'s `i18n` block. A scoped slug (`author/id`) is sent with its `/` encoded as `%2F`; an unknown slug answers 404 `No store item with slug "<slug>"`.',
  })
  @Assistant()
  @ApiData(STORE_DETAIL, 503)
  async detail(@Param() { slug }: StoreSlugParams, @Query() query: LocaleQuery): Promise<SuccessBody<StoreDetailDto>> {
    return ok(await this.store.detail(slug, query.locale));
  }

  @Post('apps/:slug/install')
  @ApiOperation({
    summary: 'Install a Store entry by its slug',
    description:
      "Downloads the item's `spec.yaml` and bundled skill files, installs its missing `requires.skills`/`requires.mcps` in the same scope first, then installs it like any digital human and answers `{appId}`. `spaceId` absent installs for every workspace, `null` only for a skill or MCP item (400 otherwise); 403 `MCP_COMMAND_BLOCKED`, 409 `ALREADY_INSTALLED`, 422 `VALIDATION_FAILED`. Emits `app:list_changed` (`change: installed`) per app installed.",
  })
  @Assistant()
  @ApiData(APP_ID, 403, 409, 422, 503)
  @HttpCode(200)
  async installSlug(
    @Param() { slug }: StoreSlugParams,
    @Body() body: StoreAppInstallDto,
  ): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.store.install({ slug, ...installPlace(body), userConfig: body.userConfig });
    return ok({ appId: app.id });
  }

  @Post('install')
  @ApiOperation({
    summary: 'Install a Store entry',
    description:
      'The same install as `POST /api/store/apps/{slug}/install`, with `slug` in the body; answers `{appId}`. 404 `No store item with slug "<slug>"` for an unknown slug, or naming a requirement no enabled source provides (nothing is installed); 403 `MCP_COMMAND_BLOCKED`, 409 `ALREADY_INSTALLED`. Emits `app:list_changed` per app installed.',
  })
  @Assistant()
  @ApiData(APP_ID, 403, 404, 409, 422, 503)
  @HttpCode(200)
  async install(@Body() body: StoreInstallDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.store.install({ slug: body.slug, ...installPlace(body), userConfig: body.userConfig });
    return ok({ appId: app.id });
  }

  @Get('app-document')
  @ApiOperation({
    summary: "Read a Store entry's document",
    description:
      "Answers `{content}`: the item's `README.md` from its source, or null when it has none or comes from a public catalog (MCP registry, Smithery, skill registries). 400 `slug is required`; 404 for an unknown slug.",
  })
  @Assistant()
  @ApiData(DOCUMENT, 400, 404, 503)
  async appDocument(@Query() query: AppDocumentQuery): Promise<SuccessBody<{ content: string | null }>> {
    return ok(await this.store.appDocument(query.slug ?? ''));
  }

  @Get('capabilities')
  @ApiOperation({
    summary: "Read the Store's capabilities",
    description:
      "Which of `installs`, `publish` and `reviewWorkflow` an enabled dhp-v2 store server turns on, and `identity` (`none` until a creator token is set, see `my-publications`). The server's documents are kept an hour per replica.",
  })
  @Assistant()
  @ApiData(STORE_CAPABILITIES)
  async capabilities(): Promise<SuccessBody<StoreCapabilitiesDto>> {
    return ok(await this.store.capabilities());
  }

  @Get('category-taxonomy')
  @ApiOperation({
    summary: "Read the Store's category taxonomy",
    description: "An enabled dhp-v2 source's `/category-taxonomy.json`, else the protocol's own categories.",
  })
  @Assistant()
  @ApiData(CATEGORY_TAXONOMY)
  async categoryTaxonomy(): Promise<SuccessBody<CategoryTaxonomyDto>> {
    return ok(await this.store.categoryTaxonomy());
  }

  @Get('discover-page')
  @ApiOperation({
    summary: "Read the Store's discover page",
    description:
      'The curated layout of an enabled dhp-v2 source (`/discover-layout.json`, its slugs resolved to listing entries, `pageSize` per node), else one paginated catalog node; `locale` picks translations. 400 names a bad `pageSize`.',
  })
  @Assistant()
  @ApiData(DISCOVER_PAGE, 400)
  async discoverPage(@Query() q: DiscoverQueryDto): Promise<SuccessBody<DiscoverPageDto>> {
    return ok(await this.store.discoverPage(q.locale, q.pageSize));
  }

  @Post('revalidate')
  @ApiOperation({
    summary: 'Revalidate the Store indexes',
    description:
      'Sends one conditional request (`If-None-Match`/`If-Modified-Since`) per index file of each enabled source and answers `{changed}`. Emits `store:sync-status-changed` after each source read.',
  })
  @Assistant()
  @ApiData(CHANGED)
  @HttpCode(200)
  async revalidate(): Promise<SuccessBody<{ changed: boolean }>> {
    return ok({ changed: await this.store.revalidate() });
  }

  @Post('refresh')
  @ApiOperation({
    summary: 'Download every Store index again',
    description:
      'Reads every index of every enabled source again in full, without the kept validators. Emits `store:sync-status-changed` after each source read.',
  })
  @Assistant()
  @ApiDone()
  @HttpCode(200)
  async refresh(): Promise<{ success: true }> {
    await this.store.refresh();
    return done();
  }

  // ── sources ──

  @Get('registries')
  @ApiOperation({
    summary: 'List Store sources',
    description:
      'Every source, built-in (`SVC_STORE_SOURCES`, `SVC_STORE_CATALOGS`) and user-added, with its state. `adapterConfig` is listed as stored, so treat this answer as secret.',
  })
  @Assistant()
  @ApiData(arr(REGISTRY_SOURCE))
  async registries(): Promise<SuccessBody<RegistrySourceDto[]>> {
    return ok((await this.store.listSources()).map(toRegistrySourceDto));
  }

  @Post('registries')
  @ApiOperation({
    summary: 'Add a Store source',
    description:
      'Adds a user source `{name, url, sourceType?}` (`svc` or `dhp-v2`): http(s) only; a host that is or resolves to a loopback, private or link-local address is refused with 400 (and checked again on every fetch). 409 `A store source with this url already exists`.',
  })
  @Assistant()
  @ApiData(REGISTRY_SOURCE, 409)
  @HttpCode(200)
  async addRegistry(@Body() body: AddRegistryDto): Promise<SuccessBody<RegistrySourceDto>> {
    return ok(toRegistrySourceDto(await this.store.addSource(body)));
  }

  /** A built-in source answers `{success:false, error}` with 200: an error, not an exception (docs/api.md, "Answers and errors"). */
  @Delete('registries/:registryId')
  @ApiOperation({
    summary: 'Remove a Store source',
    description:
      'Removes a user-added source. A built-in source answers 200 `{success: false, error: "Built-in store sources cannot be removed; turn them off instead."}`; an unknown id answers 404 `Store source not found: <id>`.',
  })
  @Assistant()
  @ApiDoneOrFailure()
  async deleteRegistry(@Param() { registryId: id }: RegistryIdParams): Promise<{ success: true } | FailureBody> {
    const refused = await this.store.deleteSource(id);
    return refused === null ? done() : { success: false, error: refused };
  }

  @Post('registries/:registryId/toggle')
  @ApiOperation({
    summary: 'Turn a Store source on or off',
    description:
      'Sets `enabled` on a source, built-in or user-added (a built-in one can be turned off but not removed). 404 `Store source not found: <id>` for an unknown id.',
  })
  @Assistant()
  @ApiDone()
  @HttpCode(200)
  async toggle(
    @Param() { registryId: id }: RegistryIdParams,
    @Body() body: ToggleRegistryDto,
  ): Promise<{ success: true }> {
    await this.store.toggleSource(id, body.enabled);
    return done();
  }

  /** Write-only: the config is merged (null deletes a key) and never echoed. */
  @Patch('registries/:registryId/adapter-config')
  @ApiOperation({
    summary: "Set a Store source's adapter configuration (write-only)",
    description:
      "Merges the body's flat keys into the source's adapter configuration (`null` deletes a key), e.g. Smithery's `apiKey` or a dhp-v2 creator `token`; the values are never echoed. 400 names a key whose value is not a string, number or boolean.",
  })
  @Assistant()
  @ApiDone(400)
  async adapterConfig(
    @Param() { registryId: id }: RegistryIdParams,
    @Body() body: AdapterConfigPatchDto,
  ): Promise<{ success: true }> {
    await this.store.patchAdapterConfig(id, body);
    return done();
  }

  // ── updates ──

  @Get('updates')
  @ApiOperation({
    summary: 'List available updates',
    description:
      'Installed Store apps whose source lists a newer version that is not ignored, with current and latest version, severity and upgrade strategy; an automatic update that was held carries `heldReason` (why it was not applied).',
  })
  @Assistant()
  @ApiData(arr(UPDATE_ITEM))
  async updates(): Promise<SuccessBody<UpdateItemDto[]>> {
    return ok(await this.store.updates());
  }

  @Post('updates/check-now')
  @ApiOperation({
    summary: 'Check for updates now',
    description:
      'Revalidates the sources, applies patch and minor updates of apps whose upgrade strategy is `auto`, and answers the updates still pending. Emits `store:sync-status-changed` per source read and `store:upgrade-available` per pending update.',
  })
  @Assistant()
  @ApiData(arr(UPDATE_ITEM))
  @HttpCode(200)
  async checkNow(): Promise<SuccessBody<UpdateItemDto[]>> {
    return ok(await this.store.checkNow());
  }

  @Post('updates/:appId/apply')
  @ApiOperation({
    summary: 'Apply an update to an installed digital human',
    description:
      'Installs the newest version, keeping the spec fields the user changed (`kept`), merging schedules by subscription id, and answers `{from, to, kept, editsKnown}`. 409 `No update is available for app <appId>`; `mode: patch_minor` refuses a major update (409); a version that sends stored settings to another MCP address is held (409) until they are given again in `settings`.',
  })
  @Assistant()
  @ApiData(APPLY_RESULT, 409, 422, 503)
  @HttpCode(200)
  async apply(@Param() { appId }: AppIdParams, @Body() body: ApplyUpdateDto): Promise<SuccessBody<ApplyResultDto>> {
    return ok(await this.store.apply(appId, body.mode ?? 'force', body.settings));
  }

  @Post('ignore-version')
  @ApiOperation({
    summary: 'Ignore one version of an update',
    description:
      'Hides that one version from the updates; a newer version surfaces again. 400 `appId must be a UUID` or `version is required`; 409 `App <appId> was not installed from a Store source`.',
  })
  @Assistant()
  @ApiData(NULL_DATA, 404, 409)
  @HttpCode(200)
  async ignoreVersion(@Body() body: IgnoreVersionDto): Promise<SuccessBody<null>> {
    await this.store.ignoreVersion(body.appId, body.version);
    return ok(null);
  }

  // ── packages ──

  @Post('import-dhpkg')
  @ApiOperation({
    summary: 'Install a digital human from a package file (.dhpkg) on the server',
    description:
      "Reads a `.dhpkg`/`.zip`, a `spec.yaml` or a folder on the server's disk (relayed by the assistant: inside a space's folder only, else 403) and installs it with its bundled skills; answers `{appId}`. Everything is checked before anything is written: archives over 50 MB, unsafe paths, symbolic links and files that look like credentials are refused, a missing required setting is 422 naming it.",
  })
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
  @ApiOperation({
    summary: "List the signed-in creator's publications",
    description:
      "The creator's listings (`GET /my/publications`) on the first enabled dhp-v2 source that turns on `publish` and holds a creator token. 403 `PUBLISHING_UNAVAILABLE` without such a source or when the server refuses the token.",
  })
  @Assistant()
  @ApiData(arr(PUBLICATION), 403, 503)
  async myPublications(): Promise<SuccessBody<PublicationDto[]>> {
    return ok(await this.store.myPublications());
  }

  @Post('unpublish')
  @ApiOperation({
    summary: 'Unpublish a Store entry',
    description:
      'Asks the publishing store server to unpublish `slug` (`<author>/<id>`; 400 otherwise); copies installed elsewhere are unaffected. 404 when the server has no such listing; 403 `PUBLISHING_UNAVAILABLE` as for `my-publications`.',
  })
  @Assistant()
  @ApiData(NULL_DATA, 400, 403, 404, 503)
  @HttpCode(200)
  async unpublish(@Body() body: UnpublishDto): Promise<SuccessBody<null>> {
    await this.store.unpublish(body.slug);
    return ok(null);
  }

  @Post('publish/preview')
  @ApiOperation({
    summary: 'Preview publishing an installed app',
    description:
      'Works on local data: answers the slug `<author>/<name>` the app would be published as (from `author`/`name` or its spec), its local version, and the version the Store lists (null when none). 400 `appId is required`; 404 for an unknown app.',
  })
  @Assistant()
  @ApiData(PUBLISH_PREVIEW, 404)
  @HttpCode(200)
  async publishPreview(
    @Body() body: PublishPreviewDto,
  ): Promise<SuccessBody<{ slug: string; localVersion: string; storeVersion: string | null }>> {
    return ok(await this.store.publishPreview(body));
  }

  @Post('publish/find-app')
  @ApiOperation({
    summary: 'Find the installed app a Store slug matches',
    description:
      'Works on local data: answers the id of the one installed app whose Store slug, `store.slug` or derived `<author>/<name>` is `slug` (narrowed by `type` and `author` when given), or null when none or several match. 400 `slug is required`.',
  })
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
  @ApiOperation({
    summary: 'Derive a slash-command name from a title',
    description:
      'Answers `name` as a slash-command name: lower-case ASCII letters and digits joined by `-` (accents stripped, at most 64 characters), `skill-<hash>` for a title with none, and an empty string for no title.',
  })
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
  @ApiOperation({
    summary: 'Install a digital human from a spec',
    description:
      'Validates `spec` (422 `VALIDATION_FAILED` naming the field), checks `userConfig` against its `config_schema`, stores it with the skill files given in `files` and answers `{appId}`. `spaceId` absent or null installs for every workspace; 403 `MCP_COMMAND_BLOCKED` for an MCP server that runs a command unless the operator allows it; 409 `ALREADY_INSTALLED`. Emits `app:list_changed` (`change: installed`).',
  })
  @HttpCode(200)
  @ApiData(APP_ID, 403, 409, 422, 503)
  async install(@Body() body: InstallAppDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.packages.installGiven(body);
    return { success: true, data: { appId: app.id } };
  }

  @Get(':appId/export')
  @ApiOperation({
    summary: 'Export an installed digital human as a package (.dhpkg)',
    description:
      'Answers the package as `application/octet-stream` with `Content-Disposition: attachment; filename="<slug>-<version>.dhpkg"` (a skill app: a `.zip` with `SKILL.md` at the root); webhook secrets and MCP environment values are emptied. 404 for an unknown app or a required skill that is neither bundled nor listed by a source; 413 over 50 MB.',
  })
  @ApiBytes('application/octet-stream', 404, 413)
  async export(@Param() { appId }: AppIdParams, @Res() res: Response): Promise<void> {
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
