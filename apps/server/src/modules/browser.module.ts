import { Module } from '@nestjs/common';
import { AiBrowser } from '#core/browser/ai-browser.js';
import { BrowserService } from '#core/browser/browser.service.js';
import { BrowserTurns } from '#core/browser/browser-turns.js';

/**
 * The AI browser (docs/api/ai-browser.md): BrowserService over the BrowserEngine and
 * BrowserProfiles ports (bound by InfraModule), offered as AiBrowser to the turn plan builders,
 * the HTTP routes and the live-view socket; BrowserTurns gives turns its tools.
 */
@Module({
  providers: [BrowserService, { provide: AiBrowser, useExisting: BrowserService }, BrowserTurns],
  exports: [AiBrowser, BrowserService, BrowserTurns],
})
export class BrowserModule {}
