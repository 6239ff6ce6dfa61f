import type { BrowserLivePage, BrowserStopResult } from '#contracts/browser.js';
import { AiBrowser, type BrowserScope, type PageViewer, type PageWatch } from '#core/browser/ai-browser.js';
import type { AgentTool } from '#core/kernel/tool.js';

/**
 * The AI browser in memory: one tool per scope (`mcp__ai-browser__browser_navigate`, answering
 * what it was asked), and a log of what turns did with their scopes (`calls`), for specs of
 * the code that gives turns the browser.
 */
export class FakeAiBrowser extends AiBrowser {
  readonly calls: string[] = [];
  /** Set to make the end-of-turn work fail. */
  failing = false;

  tools(scope: BrowserScope): AgentTool[] {
    this.calls.push(`tools ${scope.key} ${scope.kind} ${scope.profile}`);
    return [
      {
        name: 'mcp__ai-browser__browser_navigate',
        description: 'Opens a page',
        inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
        run: async (input) => ({ output: `Navigated to: ${String(input.url)}`, isError: false }),
      },
    ];
  }

  async turnEnded(scope: BrowserScope): Promise<void> {
    this.calls.push(`turnEnded ${scope.key}`);
    if (this.failing) throw new Error('profile store down');
  }

  async release(scopeKey: string): Promise<void> {
    this.calls.push(`release ${scopeKey}`);
  }

  async livePages(): Promise<BrowserLivePage[]> {
    return [];
  }

  async stopPage(): Promise<BrowserStopResult> {
    return { stopped: false, reason: 'not-owned' };
  }

  async openLogin(spaceId: string): Promise<{ viewId: string }> {
    return { viewId: `login-${spaceId}` };
  }

  async finishLogin(): Promise<{ saved: true }> {
    return { saved: true };
  }

  async watch(_viewId: string, _viewer: PageViewer): Promise<PageWatch | null> {
    return null;
  }
}
