import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { ChannelEventChannels } from '#contracts/channels.js';
import { ErrorCodes } from '#contracts/errors.js';
import { FakeTurnRepository, RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository } from '#testing/fake-apps.js';
import {
  FakeChannelChat,
  FakeChannelProvider,
  FakeChannelProviders,
  FakeChannelRepository,
} from '#testing/fake-channels.js';
import { FakeConversationRepository } from '#testing/fake-conversations.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock, RecordingMetrics } from '#testing/fakes.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import type { AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { ChannelTexts, messageClaimKey } from './channel-rules.js';
import { ChannelsService, DISPATCH_SLOT_MAX_MS } from './channels.service.js';

Logger.overrideLogger(false);

const refusal = (kind: DomainError['kind'], message: string | RegExp, code?: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  if (typeof message === 'string') assert.equal(err.message, message);
  else assert.match(err.message, message);
  if (code !== undefined) assert.equal(err.reason, code);
  return true;
};

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('ChannelsService', () => {
  let records: FakeChannelRepository;
  let chat: FakeChannelChat;
  let bus: RecordingEventBus;
  let service: ChannelsService;
  let watched: Array<[string, boolean]>;
  let providers: FakeChannelProviders;
  let queue: RecordingJobQueue;

  beforeEach(() => {
    const clock = new FakeClock();
    records = new FakeChannelRepository(() => clock.now());
    chat = new FakeChannelChat();
    chat.apps.set('app-1', 'Helper');
    chat.apps.set('app-2', 'Other');
    bus = new RecordingEventBus();
    providers = new FakeChannelProviders([
      new FakeChannelProvider('hooked'),
      new FakeChannelProvider('linked', undefined, { connection: true, defaultConfig: { mode: 'long-poll' } }),
    ]);
    const turns = new FakeTurnRepository();
    const models = new ModelSourcesService(new FakeSettingsRepository(), bus, clock, {
      dataDir: '/data',
      modelSeed: null,
    } as unknown as AppConfig);
    const approvals = new ApprovalsService(
      models,
      new FakeAppRepository(),
      new FakeConversationRepository(turns),
      turns,
      bus,
      clock,
      new RecordingMetrics(),
    );
    queue = new RecordingJobQueue();
    service = new ChannelsService(records, providers, chat, queue, bus, approvals);
    service.onModuleInit();
    watched = [];
    service.watch({ changed: async (id: string, reconnect: boolean) => void watched.push([id, reconnect]) });
  });

  const create = (over: Record<string, unknown> = {}) =>
    service.createInstance({ type: 'hooked', name: 'Support', appId: 'app-1', config: { token: 't-1' }, ...over });

  describe('createInstance', () => {
    it('stores the instance with defaults, online for a webhook provider, and announces it', async () => {
      const dto = await create({ name: '  Support  ' });
      assert.equal(dto.name, 'Support', 'the name is trimmed');
      assert.equal(dto.enabled, true);
      assert.equal(dto.state, 'online');
      assert.equal(dto.replyScope, 'all');
      assert.equal(dto.guestPolicy, 'chat-only');
      assert.deepEqual(dto.owners, []);
      assert.equal(dto.streaming, false);
      assert.equal(dto.teamId, null);
      assert.equal(records.instances.get(dto.id)?.config.token, 't-1', 'the credential is stored as given');
      assert.notEqual(dto.config.token, 't-1', 'the credential is never answered');
      const events = bus.on(ChannelEventChannels.instanceUpdated);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.instanceId, dto.id);
      assert.deepEqual(watched, [[dto.id, false]]);
    });

    it('a connection provider starts connecting; a disabled instance starts offline; defaults fill the config', async () => {
      const linked = await service.createInstance({
        type: 'linked',
        name: 'L',
        appId: 'app-1',
        config: { token: 'x' },
      });
      assert.equal(linked.state, 'connecting');
      assert.equal(records.instances.get(linked.id)?.config.mode, 'long-poll');
      const off = await create({ enabled: false });
      assert.equal(off.state, 'offline');
    });

    it('refuses bad input naming the field, and stores nothing', async () => {
      await assert.rejects(
        create({ type: 'carrier-pigeon' }),
        refusal('invalid', /^type must be one of hooked, linked/),
      );
      await assert.rejects(create({ config: {} }), refusal('invalid', ChannelTexts.missingField('token')));
      await assert.rejects(create({ config: { token: '' } }), refusal('invalid', 'config.token is required'));
      await assert.rejects(create({ name: '   ' }), refusal('invalid', 'name must not be empty'));
      await assert.rejects(
        create({ name: 'n'.repeat(201) }),
        refusal('invalid', 'name must be at most 200 characters'),
      );
      await assert.rejects(create({ replyScope: 'everyone' }), refusal('invalid', /^replyScope must be one of /));
      await assert.rejects(create({ guestPolicy: 'anything' }), refusal('invalid', /^guestPolicy must be one of /));
      await assert.rejects(
        create({ owners: ['u1', ' '] }),
        refusal('invalid', 'owners must be a list of platform user ids'),
      );
      await assert.rejects(
        create({ appId: 'nobody' }),
        refusal('not_found', 'App not found: nobody', ErrorCodes.APP_NOT_FOUND),
      );
      assert.equal(records.instances.size, 0);
      assert.deepEqual(bus.on(ChannelEventChannels.instanceUpdated), []);
    });

    it('keeps owners trimmed and once each', async () => {
      const dto = await create({ owners: [' u1', 'u1', 'u2 '] });
      assert.deepEqual(dto.owners, ['u1', 'u2']);
    });
  });

  describe('updateInstance', () => {
    it('changes what is given; a masked credential keeps the stored one', async () => {
      const { id } = await create();
      const dto = await service.updateInstance(id, { name: 'Renamed', config: { token: '***' }, streaming: true });
      assert.equal(dto.name, 'Renamed');
      assert.equal(dto.streaming, true);
      assert.equal(records.instances.get(id)?.config.token, 't-1');
    });

    it('a changed credential or re-enabling starts afresh; disabling takes it offline', async () => {
      const { id } = await create();
      await service.setState(id, 'offline', 'token refused');
      assert.equal((await service.getInstance(id)).reason, 'token refused');
      const fresh = await service.updateInstance(id, { config: { token: 't-2' } });
      assert.deepEqual([fresh.state, fresh.reason], ['online', null]);
      const off = await service.updateInstance(id, { enabled: false });
      assert.equal(off.state, 'offline');
    });

    it('refuses an unknown instance, an unknown app and a config that lost a required field', async () => {
      const { id } = await create();
      await assert.rejects(
        service.updateInstance(UNKNOWN, { name: 'x' }),
        refusal('not_found', ChannelTexts.instanceNotFound(UNKNOWN), ErrorCodes.CHANNEL_INSTANCE_NOT_FOUND),
      );
      await assert.rejects(
        service.updateInstance('not-a-uuid', { name: 'x' }),
        refusal('not_found', ChannelTexts.instanceNotFound('not-a-uuid')),
      );
      await assert.rejects(
        service.updateInstance(id, { appId: 'nobody' }),
        refusal('not_found', 'App not found: nobody'),
      );
      await assert.rejects(
        service.updateInstance(id, { config: { token: null } }),
        refusal('invalid', 'config.token is required'),
      );
      assert.equal(records.instances.get(id)?.appId, 'app-1');
      assert.equal(records.instances.get(id)?.config.token, 't-1');
    });
  });

  describe('deleteInstance', () => {
    it('removes it, announces it gone and tells the watchers; a second delete is not found', async () => {
      const { id } = await create();
      bus.published.length = 0;
      watched.length = 0;
      await service.deleteInstance(id);
      assert.deepEqual(bus.on(ChannelEventChannels.instanceUpdated), [{ instanceId: id, instance: null }]);
      assert.deepEqual(watched, [[id, false]]);
      await assert.rejects(service.deleteInstance(id), refusal('not_found', ChannelTexts.instanceNotFound(id)));
    });
  });

  describe('status and reconnect', () => {
    it('reports connected only for an enabled online instance, with its app name', async () => {
      const on = await create();
      const linked = await service.createInstance({
        type: 'linked',
        name: 'L',
        appId: 'app-2',
        config: { token: 'x' },
      });
      const statuses = await service.status();
      assert.deepEqual(
        statuses.map((s) => [s.id, s.connected, s.state, s.appName]),
        [
          [on.id, true, 'online', 'Helper'],
          [linked.id, false, 'connecting', 'Other'],
        ],
      );
      await assert.rejects(service.status(UNKNOWN), refusal('not_found', ChannelTexts.instanceNotFound(UNKNOWN)));
    });

    it('reconnect puts a failed instance back to its initial state and says it was asked', async () => {
      const { id } = await create();
      await service.setState(id, 'offline', 'down');
      bus.published.length = 0;
      watched.length = 0;
      await service.reconnect(id);
      assert.equal(records.instances.get(id)?.state, 'online');
      assert.equal(records.instances.get(id)?.reason, null);
      const [event] = bus.on(ChannelEventChannels.instanceUpdated);
      assert.equal(event?.reconnect, true);
      assert.deepEqual(watched, [[id, true]]);
    });

    it('setState publishes only a change', async () => {
      const { id } = await create();
      bus.published.length = 0;
      await service.setState(id, 'online', null);
      assert.deepEqual(bus.on(ChannelEventChannels.instanceUpdated), [], 'already online');
      await service.setState(id, 'offline', 'x');
      assert.equal(bus.on(ChannelEventChannels.instanceUpdated).length, 1);
    });
  });

  describe('threads', () => {
    const thread = async (instanceId: string, chatId = 'chat-1', appId = 'app-1') =>
      records.touchThread({
        instanceId,
        chatId,
        appId,
        channel: 'hooked',
        chatType: 'direct',
        conversationId: `app-chat:${appId}:hooked:direct:${chatId}`,
        displayName: 'Ann',
        lastMessageAt: new Date(Date.UTC(2025, 0, 1)),
        peerId: 'u-ann',
      });

    it("lists an app's threads; names and proactive flags are set on the right thread only", async () => {
      const { id } = await create();
      await thread(id);
      await thread(id, 'chat-2', 'app-2');
      assert.deepEqual(
        (await service.sessions('app-1')).map((s) => s.chatId),
        ['chat-1'],
      );
      await service.setCustomName({ appId: 'app-1', instanceId: id, chatId: 'chat-1' }, '  Ann (support) ');
      await service.setProactive({ appId: 'app-1', instanceId: id, chatId: 'chat-1' }, true);
      const [session] = await service.sessions('app-1');
      assert.equal(session!.customName, 'Ann (support)');
      assert.equal(session!.proactive, true);
      assert.equal(session!.lastMessageAt, '2025-01-01T00:00:00.000Z');
      await service.setCustomName({ appId: 'app-1', instanceId: id, chatId: 'chat-1' }, '   ');
      assert.equal((await service.sessions('app-1'))[0]!.customName, null, 'a blank name clears it');
    });

    it("refuses a thread of another app as not found, and removes only one's own", async () => {
      const { id } = await create();
      await thread(id, 'chat-2', 'app-2');
      const theirs = { appId: 'app-1', instanceId: id, chatId: 'chat-2' };
      const notFound = refusal('not_found', ChannelTexts.sessionNotFound, ErrorCodes.CHANNEL_SESSION_NOT_FOUND);
      await assert.rejects(service.setProactive(theirs, true), notFound);
      await assert.rejects(service.removeSession(theirs), notFound);
      await assert.rejects(service.removeSession({ appId: 'app-2', instanceId: 'bad', chatId: 'chat-2' }), notFound);
      assert.equal(records.threads.size, 1);
      await service.removeSession({ appId: 'app-2', instanceId: id, chatId: 'chat-2' });
      assert.equal(records.threads.size, 0);
    });

    it("stops and clears a thread's conversation; messages of an unknown app are refused", async () => {
      const { id } = await create();
      const t = await thread(id);
      assert.equal(await service.stopThread('app-1', id, 'direct', 'chat-1'), true);
      assert.equal(await service.stopThread('app-1', id, 'direct', 'missing'), false);
      await service.clearThread('app-1', id, 'direct', 'chat-1');
      assert.deepEqual(chat.stopped, [t.conversationId]);
      assert.deepEqual(chat.cleared, [t.conversationId]);
      assert.deepEqual(await service.threadMessages('app-1', id, 'group', 'chat-1'), [], 'another chat type');
      await assert.rejects(service.threadMessages('nobody'), refusal('not_found', 'App not found: nobody'));
    });
  });

  describe('accept', () => {
    const message = {
      messageId: 'm-1',
      chatId: 'c-1',
      chatType: 'direct' as const,
      from: { id: 'u-1' },
      text: 'hello',
      mentioned: false,
    };

    it('queues a message once however often it is delivered', async () => {
      const answers = [
        await service.accept('i-1', message),
        await service.accept('i-1', message),
        await service.accept('i-1', message),
      ];
      assert.deepEqual(answers, [true, false, false]);
      assert.equal(queue.named('channel.inbound').length, 1);
      // A first claim's job id was never used: no look-up for a kept failed job of that id.
      assert.equal(queue.named('channel.inbound')[0]!.options.uniqueId, true);
    });

    it("queues a message whose first delivery's replica died between its claim and its job, once", async () => {
      // What a replica killed right after the claim leaves: the claim, no job.
      assert.equal(await records.claim(messageClaimKey('i-1', 'm-1')), true);
      assert.equal(await service.accept('i-1', message), false, 'a repeat, answered as one');
      assert.deepEqual(
        queue.named('channel.inbound').map((j) => j.data),
        [{ instanceId: 'i-1', message }],
      );
      // The re-add of a claimed message keeps the look-up: a failed job of its id is cleared.
      assert.notEqual(queue.named('channel.inbound')[0]!.options.uniqueId, true);
      // Once queued, a later repeat adds nothing, even after the queue forgot the job.
      queue.jobs.clear();
      assert.equal(await service.accept('i-1', message), false);
      assert.equal(queue.named('channel.inbound').length, 0);
    });

    it('claims and queues a batch together: each message once, repeats and copies in it starting nothing', async () => {
      const other = { ...message, messageId: 'm-2', chatId: 'c-2' };
      const third = { ...message, messageId: 'm-3', chatId: 'c-3' };
      assert.equal(await service.accept('i-1', message), true, 'm-1 queued before the batch');
      // m-3 was claimed by a replica that died before its job: the batch's repeat queues it.
      assert.equal(await records.claim(messageClaimKey('i-1', 'm-3')), true);
      await service.acceptMany('i-1', [message, other, other, third]);
      const jobs = queue.named('channel.inbound');
      assert.deepEqual(
        jobs.map((j) => j.data.message.messageId),
        ['m-1', 'm-2', 'm-3'],
      );
      assert.equal(jobs[1]!.options.uniqueId, true, 'a first claim skips the look-up for a kept failed job');
      assert.notEqual(jobs[2]!.options.uniqueId, true, "a repeat's re-add keeps it");
      for (const id of ['m-1', 'm-2', 'm-3'])
        assert.equal(await records.claimed(`${messageClaimKey('i-1', id)}:queued`), true, `${id} marked queued`);
      // The same batch again (a poll after a failure before the cursor moved): nothing more.
      queue.jobs.clear();
      await service.acceptMany('i-1', [message, other, third]);
      assert.equal(queue.named('channel.inbound').length, 0);
    });

    it("releases a batch's messages the queue refused (the platform's retry is taken) and marks the rest queued", async () => {
      const other = { ...message, messageId: 'm-2', chatId: 'c-2' };
      const add = queue.add.bind(queue);
      queue.add = async (name, data, options) => {
        if ((data as { message?: { messageId: string } }).message?.messageId === 'm-2') throw new Error('queue down');
        return add(name, data, options);
      };
      await assert.rejects(service.acceptMany('i-1', [message, other]), /queue down/);
      assert.equal(await records.claimed(`${messageClaimKey('i-1', 'm-1')}:queued`), true);
      assert.equal(await records.claimed(messageClaimKey('i-1', 'm-2')), false, 'released');
      queue.add = add;
      await service.acceptMany('i-1', [message, other]);
      assert.deepEqual(
        queue.named('channel.inbound').map((j) => j.data.message.messageId),
        ['m-1', 'm-2'],
      );
    });
  });

  describe('dispatch', () => {
    it('hands a message to its turn once when its job runs again (its replica died after handing it)', async () => {
      const { id } = await create();
      const job = {
        instanceId: id,
        message: {
          messageId: 'm-9',
          chatId: 'c-9',
          chatType: 'direct' as const,
          from: { id: 'u-9' },
          text: 'hi',
          mentioned: false,
        },
      };
      await service.dispatch(job);
      await service.dispatch(job);
      assert.deepEqual(
        chat.submitted.map((s) => s.message),
        ['hi'],
      );
    });

    /** Message `m-<n>` of user `u-<n>` in a direct chat of their own (`c-<n>`). */
    const directMessage = (n: number, text: string) => ({
      messageId: `m-${n}`,
      chatId: `c-${n}`,
      chatType: 'direct' as const,
      from: { id: `u-${n}` },
      text,
      mentioned: false,
    });

    it("reads the app the job names beside the instance, and the instance's own when it names another", async () => {
      const { id } = await create();
      const read: string[] = [];
      const app = chat.app.bind(chat);
      chat.app = async (appId) => {
        read.push(appId);
        return app(appId);
      };
      const message = (n: number) => directMessage(n, `hi ${n}`);
      await service.dispatch({ instanceId: id, message: message(1), appId: 'app-1' });
      assert.deepEqual(read, ['app-1'], 'one read, beside the instance');
      // The instance was given to another digital human after the message was received.
      await service.dispatch({ instanceId: id, message: message(2), appId: 'app-2' });
      assert.deepEqual(read, ['app-1', 'app-2', 'app-1'], "the instance's app is read again");
      // A job queued before jobs carried the app.
      await service.dispatch({ instanceId: id, message: message(3) });
      assert.deepEqual(read, ['app-1', 'app-2', 'app-1', 'app-1']);
      assert.deepEqual(
        chat.submitted.map((s) => [s.app.id, s.message]),
        [
          ['app-1', 'hi 1'],
          ['app-1', 'hi 2'],
          ['app-1', 'hi 3'],
        ],
      );
      // The thread's record is written once its turn has started (for the lists).
      assert.equal((await records.findThread(id, 'c-3'))?.appId, 'app-1');
    });

    /** The queued job of message `m<n>` from chat `c-<n>`. */
    const chatMessageJob = (instanceId: string, n: number) => ({
      instanceId,
      appId: 'app-1',
      message: directMessage(n, `m${n}`),
    });

    it('takes a burst a few messages at a time, first come first served', async () => {
      const { id } = await create();
      const submit = chat.submit.bind(chat);
      const gates: Array<() => void> = [];
      let inside = 0;
      let most = 0;
      chat.submit = async (input) => {
        inside++;
        most = Math.max(most, inside);
        await new Promise<void>((resolve) => gates.push(resolve));
        inside--;
        return submit(input);
      };
      const burst = Array.from({ length: 7 }, (_, n) => service.dispatch(chatMessageJob(id, n)));
      const settle = async () => {
        for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      };
      await settle();
      assert.equal(gates.length, 4, 'four at once');
      while (gates.length > 0) {
        gates.shift()!();
        await settle();
      }
      await Promise.all(burst);
      assert.equal(most, 4);
      // The four taken at once go side by side; the rest in the order they came.
      const order = chat.submitted.map((s) => s.message);
      assert.deepEqual(order.slice(0, 4).sort(), ['m0', 'm1', 'm2', 'm3']);
      assert.deepEqual(order.slice(4), ['m4', 'm5', 'm6']);
    });

    it('gives a slot up when its dispatch hangs, so the next messages still start', async (t) => {
      t.mock.timers.enable({ apis: ['setTimeout'] });
      const { id } = await create();
      const submit = chat.submit.bind(chat);
      let hung = 0;
      chat.submit = async (input) => {
        // The first four never answer (a database that went silent); the others do.
        if (hung < 4) {
          hung++;
          return new Promise<never>(() => undefined);
        }
        return submit(input);
      };
      const dispatchOf = (n: number) => service.dispatch(chatMessageJob(id, n));
      for (let n = 0; n < 4; n++) void dispatchOf(n);
      const next = dispatchOf(4);
      const settle = async () => {
        for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      };
      await settle();
      assert.equal(hung, 4);
      assert.equal(chat.submitted.length, 0, 'the fifth waits for a slot');
      t.mock.timers.tick(DISPATCH_SLOT_MAX_MS - 1);
      await settle();
      assert.equal(chat.submitted.length, 0, 'not before the limit');
      t.mock.timers.tick(1);
      await next;
      assert.deepEqual(
        chat.submitted.map((s) => s.message),
        ['m4'],
      );
    });
  });

  describe("a turn's reply", () => {
    it("is queued under its turn's key: given again (the reaper delivering a lost turn's recorded reply) it is one job", async () => {
      const { id } = await create();
      const [listener] = chat.listeners;
      assert.ok(listener);
      const reply = {
        appId: 'app-1',
        conversationId: 'thread-1',
        turnId: 'turn-1',
        origin: { instanceId: id, channel: 'hooked', chatType: 'direct' as const, chatId: 'c-1', replyTo: 'm-1' },
        reply: 'Hello back',
      };
      await listener.replied(reply);
      await listener.replied(reply);
      const jobs = queue.named('channel.reply');
      assert.deepEqual(
        jobs.map((j) => [j.data.key, j.data.parts]),
        [['turn:turn-1', ['Hello back']]],
      );
    });
  });

  describe('sendReply', () => {
    const reply = (instanceId: string) => ({
      instanceId,
      chatType: 'direct' as const,
      chatId: 'chat-1',
      replyTo: null,
      parts: ['one', 'two', 'three'],
      key: 'turn:t-1',
    });
    const sentTexts = () => (providers.find('hooked') as FakeChannelProvider).sent.map((m) => m.text);

    it('sends the parts in order, and a job run again (its replica died) sends only the parts not yet sent', async () => {
      const { id } = await create();
      // The first run died after its first part.
      await records.claim('reply-sent:turn:t-1:0');
      await service.sendReply(reply(id), async () => undefined);
      assert.deepEqual(sentTexts(), ['two', 'three']);
      await service.sendReply(reply(id), async () => undefined);
      assert.deepEqual(sentTexts(), ['two', 'three'], 'every part was sent: nothing again');
    });

    it('a reply queued before parts were marked (no key) is sent whole each time', async () => {
      const { id } = await create();
      const { key: _key, ...unkeyed } = reply(id);
      await service.sendReply(unkeyed, async () => undefined);
      await service.sendReply(unkeyed, async () => undefined);
      assert.deepEqual(sentTexts(), ['one', 'two', 'three', 'one', 'two', 'three']);
    });
  });
});
