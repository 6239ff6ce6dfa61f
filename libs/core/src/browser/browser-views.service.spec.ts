import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserFrame } from '#contracts/browser.js';
import { FakeAiBrowser, FakeBrowserProfiles, FakeLivePageRegistry } from '#testing/fake-browser.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { DomainError } from '../errors/domain-error.js';
import { Replica } from '../ports/replica.port.js';
import { BrowserViewsService } from './browser-views.service.js';

interface TestReplica {
  browser: FakeAiBrowser;
  views: BrowserViewsService;
}

describe('BrowserViewsService across replicas', () => {
  let bus: RecordingEventBus;
  let registry: FakeLivePageRegistry;
  let profiles: FakeBrowserProfiles;
  let a: TestReplica;
  let b: TestReplica;

  const replica = (name: string): TestReplica => {
    const browser = new FakeAiBrowser(profiles, name);
    const views = new BrowserViewsService(registry, bus, new Replica(name, 'services', true), profiles, browser);
    views.onModuleInit();
    return { browser, views };
  };
  /** A page came or went: the engine's event makes every replica announce again. */
  const announced = async (): Promise<void> => {
    await bus.publish('ai-browser:view-gone', { viewId: 'any' });
    await sleep(80);
  };

  beforeEach(() => {
    bus = new RecordingEventBus();
    registry = new FakeLivePageRegistry();
    profiles = new FakeBrowserProfiles();
    a = replica('a');
    b = replica('b');
  });

  afterEach(async () => {
    await a.views.onModuleDestroy();
    await b.views.onModuleDestroy();
  });

  it('lists the pages of every replica, filtered by space and conversation', async () => {
    a.browser.openPage('conv-1', 'space-1', 'https://one.test/');
    b.browser.openPage('conv-2', 'space-2', 'https://two.test/');
    await announced();
    const fromA = await a.views.livePages({});
    assert.deepEqual(fromA.map((p) => p.viewId).sort(), ['a-1', 'b-1']);
    assert.deepEqual(
      (await b.views.livePages({ spaceId: 'space-1' })).map((p) => p.viewId),
      ['a-1'],
    );
    assert.deepEqual(
      (await b.views.livePages({ conversationId: 'conv-2' })).map((p) => p.viewId),
      ['b-1'],
    );
  });

  it('stops a page held by the other replica, with the holder’s refusals', async () => {
    const viewId = a.browser.openPage('conv-1', 'space-1', 'https://one.test/');
    await announced();
    assert.deepEqual(await b.views.stopPage(viewId, 'conv-other'), { stopped: false, reason: 'not-owned' });
    assert.deepEqual(await b.views.stopPage(viewId, 'conv-1'), { stopped: true });
    assert.equal(a.browser.pages.has(viewId), false);
    // Nowhere: the original's refusal.
    assert.deepEqual(await b.views.stopPage('nowhere', null), { stopped: false, reason: 'not-owned' });
  });

  it('finishes a sign-in held by the other replica; an unknown one is 404; the hint follows the cookies', async () => {
    const { viewId } = await a.views.openLogin('space-1', 'https://login.test/');
    a.browser.signIn(viewId, [
      {
        name: 'sid',
        value: 'v',
        domain: '.login.test',
        path: '/',
        expires: -1,
        httpOnly: true,
        secure: true,
        sameSite: 'Lax',
      },
    ]);
    assert.deepEqual(await a.views.livePages({}), [], 'sign-in pages are no conversation’s');
    assert.deepEqual(await b.views.finishLogin(viewId), { saved: true });
    assert.deepEqual(await b.views.signedIn('space-1', ['https://www.login.test/x', 'https://other.test/']), [
      true,
      false,
    ]);
    assert.deepEqual(await b.views.signedIn('space-2', ['https://login.test/']), [false]);
    await assert.rejects(
      () => b.views.finishLogin(viewId),
      (err: unknown) => err instanceof DomainError && err.kind === 'not_found',
    );
  });

  it('relays a live view from the holder: frames out, input in, leaving, and the page ending', async () => {
    const viewId = a.browser.openPage('conv-1', 'space-1', 'https://one.test/');
    await announced();
    const frames: BrowserFrame[] = [];
    const ended: string[] = [];
    const watch = await b.views.watch(viewId, { frame: (f) => frames.push(f), ended: (r) => ended.push(r) });
    assert.ok(watch);
    assert.equal(a.browser.viewerCount(viewId), 1);
    a.browser.pushFrame(viewId);
    assert.equal(frames.length, 1);
    await watch.input({ type: 'mouse', event: 'mousePressed', x: 10, y: 20, button: 'left', clickCount: 1 });
    await watch.input({ type: 'ack', seq: frames[0]!.seq });
    assert.deepEqual(
      a.browser.inputs.map((i) => i.input.type),
      ['mouse', 'ack'],
    );
    await watch.close();
    assert.equal(a.browser.viewerCount(viewId), 0);

    const again = await b.views.watch(viewId, { frame: () => undefined, ended: (r) => ended.push(r) });
    assert.ok(again);
    a.browser.closePage(viewId);
    assert.deepEqual(ended, ['The page closed']);
    assert.equal(await b.views.watch('nowhere', { frame: () => undefined, ended: () => undefined }), null);
  });

  it('a replica whose lease lapses drops out: its pages vanish from the list', async () => {
    a.browser.openPage('conv-1', 'space-1', 'https://one.test/');
    await announced();
    assert.equal((await b.views.livePages({})).length, 1);
    // Replica a stops renewing (it died): past the lease only b's own announcement counts.
    await a.views.onModuleDestroy();
    registry.now += registry.leaseMs + 1;
    await b.views['announce']();
    assert.deepEqual(await b.views.livePages({}), []);
  });

  it('without an engine: no pages, and a sign-in answers 503', async () => {
    const alone = new BrowserViewsService(registry, bus, new Replica('c', 'services', true), profiles, null);
    assert.deepEqual(await alone.livePages({ spaceId: 'nothing' }), []);
    await assert.rejects(
      () => alone.openLogin('space-1', 'https://login.test/'),
      (err: unknown) => err instanceof DomainError && err.kind === 'unavailable',
    );
  });
});
