import { Module } from '@nestjs/common';
import { BrowserViewsService } from '#core/browser/browser-views.service.js';
import { BrowserModule } from './browser.module.js';

/**
 * The AI browser's people-facing side across replicas: live pages listed from every replica,
 * stop, sign-in and the live view sent to the page's holder. In every role, because a page lives
 * where its turn runs (a worker too) and that replica answers the commands for it. The engine's
 * AiBrowser comes from BrowserModule; the profiles and the page registry are bound by InfraModule.
 */
@Module({
  imports: [BrowserModule],
  providers: [BrowserViewsService],
  exports: [BrowserViewsService],
})
export class BrowserViewsModule {}
