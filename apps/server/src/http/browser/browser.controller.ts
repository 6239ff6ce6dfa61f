import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { BrowserLivePage, BrowserLoginSite, BrowserStopResult } from '#contracts/browser.js';
import type { SuccessBody } from '#contracts/errors.js';
import { AppsService } from '#core/apps/apps.service.js';
import { BrowserViewsService } from '#core/browser/browser-views.service.js';
import { SpacesService } from '#core/spaces/spaces.service.js';
import { ok } from '../common/envelope.js';
import { ApiData } from '../openapi/api-data.js';
import { arr, bool, obj, str } from '../openapi/schema.js';
import { BROWSER_LIVE_PAGE, BROWSER_LOGIN_SITE, BROWSER_STOP_RESULT } from '../openapi/response-schemas.js';
import { LivePagesQuery, LoginSessionDto, StopPageDto } from './browser.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { AppIdParams, BrowserViewParams } from '../common/path-params.js';

/** The AI browser's pages, sign-in sessions and stop (docs/api/ai-browser.md). */
@ApiTags('AI browser')
@Controller('api/browser')
export class BrowserController {
  constructor(
    private readonly views: BrowserViewsService,
    private readonly spaces: SpacesService,
  ) {}

  @Get('pages')
  @ApiOperation({
    summary: "List the AI browser's live pages",
    description:
      'The live pages of conversations on every replica (`viewId`, `conversationId`, `spaceId`, `url`, `title`, `owned`, `active`), filtered by `spaceId` and/or `conversationId` when given. Sign-in pages are not listed.',
  })
  @ApiData(arr(BROWSER_LIVE_PAGE))
  async pages(@Query() query: LivePagesQuery): Promise<SuccessBody<BrowserLivePage[]>> {
    return ok(await this.views.livePages({ spaceId: query.spaceId, conversationId: query.conversationId }));
  }

  @Post('pages/:viewId/stop')
  @ApiOperation({
    summary: 'Stop an AI browser page',
    description:
      'Closes the page, from any replica; answers `{stopped, reason?}`: `reason: "not-owned"` unless `conversationId` opened it (without it, any conversation\'s page) or when no replica holds it, `"in-use"` while a tool is working on it.',
  })
  @HttpCode(200)
  @ApiData(BROWSER_STOP_RESULT, 404)
  async stop(
    @Param() { viewId }: BrowserViewParams,
    @Body() body: StopPageDto,
  ): Promise<SuccessBody<BrowserStopResult>> {
    return ok(await this.views.stopPage(viewId, body.conversationId ?? null));
  }

  @Post('login-sessions')
  @ApiOperation({
    summary: 'Open a browser sign-in session',
    description:
      "Opens `url` (http(s) only, else 400 `url must be an http(s) URL`; a blocked address answers 400 with the navigation policy's text) in the space's browser profile and answers `{viewId}`; the person signs in through the live view `/ws/browser/<viewId>`. 404 for an unknown space.",
  })
  @HttpCode(200)
  @ApiData(obj({ viewId: str('Watch and drive it on /ws/browser/:viewId') }, ['viewId']), 404, 503)
  async openLogin(@Body() body: LoginSessionDto): Promise<SuccessBody<{ viewId: string }>> {
    await this.spaces.get(body.spaceId);
    return ok(await this.views.openLogin(body.spaceId, body.url));
  }

  @Post('login-sessions/:viewId/finish')
  @ApiOperation({
    summary: 'Finish a browser sign-in session',
    description:
      "Saves the page's cookies into the space's profile and closes the page (its live views end with close code 4000); any replica may receive it. 404 for an unknown or already finished session.",
  })
  @HttpCode(200)
  @ApiData(obj({ saved: bool() }, ['saved']), 404)
  async finishLogin(@Param() { viewId }: BrowserViewParams): Promise<SuccessBody<{ saved: true }>> {
    return ok(await this.views.finishLogin(viewId));
  }
}

/** `GET /api/apps/:appId/browser-login`: a route of its own, so the app's read stays as it is. */
@ApiTags('Digital humans')
@Controller('api/apps')
export class AppBrowserLoginController {
  constructor(
    private readonly apps: AppsService,
    private readonly views: BrowserViewsService,
  ) {}

  @Get(':appId/browser-login')
  @ApiOperation({
    summary: "Read the browser sign-in state of a digital human's sites",
    description:
      "The app's `browser_login` sites in spec order, each with `signedIn` when its space's profile holds a cookie for the site's host or a parent domain: a hint, not a verified sign-in. 404 for an unknown app.",
  })
  @ApiData(arr(BROWSER_LOGIN_SITE), 404)
  async browserLogin(@Param() { appId }: AppIdParams): Promise<SuccessBody<BrowserLoginSite[]>> {
    const app = await this.apps.get(appId);
    const sites = app.spec.browser_login ?? [];
    // The profile is the space's (an app in no space has none yet).
    const signedIn = app.spaceId
      ? await this.views.signedIn(
          app.spaceId,
          sites.map((s) => s.url),
        )
      : sites.map(() => false);
    return ok(sites.map((site, i) => ({ url: site.url, label: site.label, signedIn: signedIn[i]! })));
  }
}
