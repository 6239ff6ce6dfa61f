import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { channelThreadId } from '#contracts/channels.js';
import { WATCHER_SPEC } from '#testing/fake-apps.js';
import { FakeChannelProvider, FakeChannelProviders, FakeChannelRepository } from '#testing/fake-channels.js';
import { appsWorld } from '#testing/service-worlds.js';
import { ChannelsService } from '../../channels/channels.service.js';

Logger.overrideLogger(false);

const SPEC = { ...WATCHER_SPEC, display_name: 'Price Watcher' };

type World = ReturnType<typeof appsWorld>;

/** The digital-human side of channels, driven by the real channels service as a queued message is. */
describe('AppChannelChat', () => {
  let w: World;
  let channels: ChannelsService;
  /** The app ids read from the repository since `count()`. */
  let reads: string[];

  const count = () => {
    reads = [];
    const findById = w.appRepo.findById.bind(w.appRepo);
    w.appRepo.findById = async (appId) => {
      reads.push(appId);
      return findById(appId);
    };
  };
  const message = (messageId: string) => ({
    messageId,
    chatId: 'c-1',
    chatType: 'direct' as const,
    chatName: 'Ann',
    from: { id: 'u-1', name: 'Ann' },
    text: 'How are prices?',
    mentioned: false,
  });

  beforeEach(async () => {
    w = appsWorld();
    await w.space('s1');
    const records = new FakeChannelRepository(() => w.clock.now());
    const providers = new FakeChannelProviders([new FakeChannelProvider('hooked')]);
    channels = new ChannelsService(records, providers, w.channels, w.queue, w.bus, w.approvals);
    channels.onModuleInit();
  });

  it("reads the digital human once per message and starts its turn in the app's space, titled with its name", async () => {
    const app = await w.apps.install({ spec: SPEC, spaceId: 's1' });
    // A guest's message: an owner's direct message also looks for the app's open question first.
    const instance = await channels.createInstance({
      type: 'hooked',
      name: 'Support',
      appId: app.id,
      config: { token: 't' },
      owners: ['boss'],
    });
    count();
    await channels.dispatch({ instanceId: instance.id, message: message('m-1') });

    assert.deepEqual(reads, [app.id], 'one read of the app for the whole message');
    const thread = channelThreadId(app.id, 'hooked', 'direct', 'c-1');
    const conversation = await w.conversations.findById(thread);
    assert.equal(conversation?.spaceId, 's1');
    assert.equal(conversation?.appId, app.id);
    assert.equal(conversation?.title, 'Price Watcher · Ann');
    const turns = (await w.turns.listActive()).filter((t) => t.conversationId === thread);
    assert.deepEqual(
      turns.map((t) => [t.kind, t.spaceId, t.request.appId, t.request.guest]),
      [['app-chat', 's1', app.id, true]],
    );
  });

  it('ignores a message for a digital human that was uninstalled meanwhile', async () => {
    const app = await w.apps.install({ spec: SPEC, spaceId: 's1' });
    const instance = await channels.createInstance({
      type: 'hooked',
      name: 'Support',
      appId: app.id,
      config: { token: 't' },
    });
    await w.apps.uninstall(app.id, false);
    await channels.dispatch({ instanceId: instance.id, message: message('m-1') });
    await channels.dispatch({ instanceId: instance.id, message: message('m-2') });
    assert.equal(await w.conversations.findById(channelThreadId(app.id, 'hooked', 'direct', 'c-1')), null);
    assert.deepEqual(await w.turns.listActive(), []);
  });
});
