import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { FakeAiBrowser } from '#testing/fake-browser.js';
import type { PlanHooks } from '../agent/engine/turn-plan.js';
import type { App } from '../kernel/app.js';
import type { Space } from '../kernel/space.js';
import { appMayUseBrowser, BROWSER_PROMPT, BrowserTurns } from './browser-turns.js';

Logger.overrideLogger(false);

const app = (permissions: string[] | undefined, granted: string[] = [], denied: string[] = []) =>
  ({
    id: 'dh-1',
    spec: { type: 'automation', name: 'Scout', ...(permissions ? { permissions } : {}) },
    permissions: { granted, denied },
  }) as unknown as App;
const space = { id: 's1', path: '/work/s1' } as Space;
type EndHooks = Pick<PlanHooks, 'onComplete' | 'onFailure'>;
const endHooks = (onComplete: () => void = () => undefined, onFailure: () => void = () => undefined): EndHooks => ({
  onComplete: async () => onComplete(),
  onFailure: async () => onFailure(),
});
const result = { reply: 'done', thoughts: [], tokenUsage: {} } as never;
const failure = { error: 'boom', interrupted: null, reply: '', thoughts: [], tokenUsage: {} } as never;

describe('appMayUseBrowser', () => {
  it('is on for a spec without permissions, and for one that lists ai-browser', () => {
    assert.equal(appMayUseBrowser(app(undefined)), true);
    assert.equal(appMayUseBrowser(app(['ai-browser', 'bash'])), true);
  });

  it('is off for a spec whose permissions leave it out, unless the user granted it', () => {
    assert.equal(appMayUseBrowser(app(['bash'])), false);
    assert.equal(appMayUseBrowser(app([])), false);
    assert.equal(appMayUseBrowser(app(['bash'], ['ai-browser'])), true);
  });

  it("the user's revoke wins over the spec and a grant", () => {
    assert.equal(appMayUseBrowser(app(['ai-browser'], [], ['ai-browser'])), false);
    assert.equal(appMayUseBrowser(app(undefined, ['ai-browser'], ['ai-browser'])), false);
  });
});

describe('BrowserTurns', () => {
  it("gives a chat the browser only when its toolset is open, in the space's profile", () => {
    const browser = new FakeAiBrowser();
    const turns = new BrowserTurns(browser);
    assert.deepEqual(turns.forChat(space, 'c1', false).tools, []);
    assert.equal(turns.forChat(space, 'c1', false).prompt, null);
    const open = turns.forChat(space, 'c1', true);
    assert.deepEqual(
      open.tools.map((t) => t.name),
      ['mcp__ai-browser__browser_navigate'],
    );
    assert.equal(open.prompt, BROWSER_PROMPT);
    assert.deepEqual(browser.calls, ['tools conv:c1 chat s1']);
  });

  it("saves a conversation's profile after each turn and keeps its pages", async () => {
    const browser = new FakeAiBrowser();
    const recorded: string[] = [];
    const hooks = new BrowserTurns(browser).forAppChat(app(undefined), space, 'app-chat:dh-1').hooks(
      endHooks(
        () => recorded.push('complete'),
        () => recorded.push('failure'),
      ),
    );
    await hooks.onComplete(result);
    await hooks.onFailure(failure);
    assert.deepEqual(recorded, ['complete', 'failure']);
    assert.deepEqual(browser.calls, [
      'tools conv:app-chat:dh-1 app-chat s1',
      'turnEnded conv:app-chat:dh-1',
      'turnEnded conv:app-chat:dh-1',
    ]);
  });

  it("closes a run's pages when the run ends, not when a reminder turn follows", async () => {
    const browser = new FakeAiBrowser();
    const turns = new BrowserTurns(browser);
    let ended = false;
    const hooks = turns.forRun(app(['ai-browser']), space, 'r1', 'conv-r').hooks(endHooks(), () => ended);
    await hooks.onComplete(result);
    ended = true;
    await hooks.onComplete(result);
    assert.deepEqual(browser.calls, ['tools run:r1 run s1', 'turnEnded run:r1', 'turnEnded run:r1', 'release run:r1']);
    browser.calls.length = 0;
    await hooks.onFailure(failure);
    assert.deepEqual(browser.calls, ['turnEnded run:r1', 'release run:r1']);
  });

  it('a digital human without the permission gets no browser', () => {
    const browser = new FakeAiBrowser();
    const turns = new BrowserTurns(browser);
    assert.deepEqual(turns.forRun(app(['bash']), space, 'r1', 'c').tools, []);
    assert.deepEqual(turns.forAppChat(app(['bash']), space, 'c').tools, []);
    assert.deepEqual(browser.calls, []);
  });

  it("a failing profile save never fails the turn's recording", async () => {
    const browser = new FakeAiBrowser();
    browser.failing = true;
    const hooks = new BrowserTurns(browser).forChat(space, 'c1', true).hooks(endHooks());
    await hooks.onComplete(result);
    assert.deepEqual(browser.calls.slice(1), ['turnEnded conv:c1']);
  });
});
