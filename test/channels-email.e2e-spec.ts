import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { emailChatId } from '#infra/channels/email-channel.provider.js';
import { apiClient, okData } from '#testing/api-client.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { CapturingSmtpServer, DovecotServer, dovecotInstalled } from '#testing/mail-servers.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { lastUserTextOf, textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const BOT = 'bot@example.test';
const BOT_PASSWORD = 'imap-s3cret-pw';
const ALICE = 'alice@example.test';
const BOB = 'bob@example.test';
/** A 1×1 PNG. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Answers mail.',
  type: 'automation',
  system_prompt: 'You help the user by email.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

let counter = 0;
interface MailOptions {
  from?: string;
  fromName?: string;
  subject?: string;
  text: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string[];
  image?: boolean;
}
/** An RFC 5322 mail as a mail client writes it. */
function mail(o: MailOptions): { id: string; raw: string } {
  const id = o.messageId ?? `<m${Date.now()}.${++counter}@client.example.test>`;
  const head = [
    `From: ${o.fromName ?? 'Alice Liddell'} <${o.from ?? ALICE}>`,
    `To: Bot <${BOT}>`,
    `Subject: ${o.subject ?? 'Hello'}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${id}`,
    ...(o.inReplyTo ? [`In-Reply-To: ${o.inReplyTo}`] : []),
    ...(o.references ? [`References: ${o.references.join(' ')}`] : []),
    'MIME-Version: 1.0',
  ];
  if (!o.image) return { id, raw: [...head, 'Content-Type: text/plain; charset=utf-8', '', o.text, ''].join('\r\n') };
  const b = 'b0undary';
  return {
    id,
    raw: [
      ...head,
      `Content-Type: multipart/mixed; boundary="${b}"`,
      '',
      `--${b}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      o.text,
      `--${b}`,
      'Content-Type: image/png; name="dot.png"',
      'Content-Disposition: attachment; filename="dot.png"',
      'Content-Transfer-Encoding: base64',
      '',
      PIXEL,
      `--${b}--`,
      '',
    ].join('\r\n'),
  };
}

/**
 * The email channel against real mail protocol peers on loopback: Debian's dovecot (IMAP, mail
 * delivered by APPEND) and smtp-server capturing what is sent.
 */
describe(
  `message channels: email (${testMode()})`,
  { skip: dovecotInstalled() ? false : 'dovecot not installed' },
  () => {
    const h = new AgentHarness();
    const { api, okData } = h;
    let imap: DovecotServer;
    let smtp: CapturingSmtpServer;
    let events: WsTestClient;
    let appId: string;
    let instanceId: string;
    const event = (channel: string, match: (f: Frame) => boolean, timeoutMs = 20_000) =>
      events.next((f) => f.type === 'event' && f.channel === channel && match(f), timeoutMs);
    const named = (name: string, state: string) => (f: Frame) => {
      const i = f.data!.instance as { name?: string; state?: string } | null;
      return i?.name === name && i.state === state;
    };
    const requestsWith = (text: string) =>
      h.model.requests.filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes(text));
    const deliver = (o: MailOptions) => {
      const m = mail(o);
      return imap.deliver(BOT, m.raw).then(() => m.id);
    };
    const config = (over: Record<string, unknown> = {}) => ({
      imapHost: '127.0.0.1',
      imapPort: imap.port,
      imapTls: 'none',
      imapUser: BOT,
      imapPassword: BOT_PASSWORD,
      smtpHost: '127.0.0.1',
      smtpPort: smtp.port,
      smtpTls: 'none',
      smtpPassword: 'smtp-s3cret-pw',
      fromAddress: BOT,
      fromName: 'Chatty',
      ...over,
    });
    const chatOf = (address: string, root: string) => emailChatId(address, root)!;

    before(async () => {
      imap = await DovecotServer.start({ [BOT]: BOT_PASSWORD, [ALICE]: 'alice-pw' });
      smtp = await CapturingSmtpServer.start({ [BOT]: 'smtp-s3cret-pw' });
      await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
      events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
      const spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Email' })).id;
      appId = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: spec('Chatty'), spaceId })).appId;
    });
    after(async () => {
      events?.close();
      await h.stop();
      await smtp?.close();
      await imap?.close();
    });
    beforeEach(() => h.model.reset());

    it('is listed with its fields; a password the IMAP server refuses: offline with its reason, no retry storm', async () => {
      const providers = okData<Array<{ type: string; configFields: Array<{ key: string; type: string }> }>>(
        await api.get('/api/im-channels/providers'),
      );
      const provider = providers.find((p) => p.type === 'email');
      assert.ok(provider);
      assert.deepEqual(
        provider.configFields.map((f) => [f.key, f.type]),
        [
          ['imapHost', 'string'],
          ['imapPort', 'string'],
          ['imapTls', 'string'],
          ['imapUser', 'string'],
          ['imapPassword', 'secret'],
          ['mailbox', 'string'],
          ['smtpHost', 'string'],
          ['smtpPort', 'string'],
          ['smtpTls', 'string'],
          ['smtpUser', 'string'],
          ['smtpPassword', 'secret'],
          ['fromAddress', 'string'],
          ['fromName', 'string'],
        ],
      );
      const bad = await api.post('/api/im-channels/instances', {
        type: 'email',
        name: 'x',
        appId,
        config: config({ fromAddress: 'not an address' }),
      });
      assert.deepEqual([bad.status, bad.body.error], [400, 'config.fromAddress must be an email address']);

      const offline = event('im-channels:instance-updated', named('Wrong password', 'offline'));
      const opened = imap.opened;
      const wrong = okData<{ id: string; config: Record<string, unknown> }>(
        await api.post('/api/im-channels/instances', {
          type: 'email',
          name: 'Wrong password',
          appId,
          config: config({ imapPassword: 'not-the-password' }),
        }),
      );
      assert.equal(wrong.config.imapPassword, '***');
      assert.equal(wrong.config.smtpPassword, '***');
      const e = await offline;
      const reason = (e.data!.instance as { reason: string }).reason;
      assert.match(reason, /^IMAP login refused: .*Authentication failed/);
      assert.doesNotMatch(JSON.stringify(e.data), /not-the-password|smtp-s3cret/);
      const tries = imap.opened - opened;
      await sleep(3000);
      assert.equal(imap.opened - opened, tries, 'no retry until the instance is changed or reconnected');
      okData(await api.delete(`/api/im-channels/instances/${wrong.id}`));
    });

    it('a mail starts one turn (seen three times: one); the reply is sent by SMTP in the conversation', async () => {
      const online = event('im-channels:instance-updated', named('Chatty by mail', 'online'));
      const created = okData<{ id: string; config: Record<string, unknown> }>(
        await api.post('/api/im-channels/instances', {
          type: 'email',
          name: 'Chatty by mail',
          appId,
          config: config(),
        }),
      );
      instanceId = created.id;
      assert.deepEqual(created.config, {
        mailbox: 'INBOX',
        ...config({ imapPassword: '***', smtpPassword: '***' }),
      });
      await online;
      await waitFor(async () => imap.connections === 1, 10_000, 'one IMAP connection');
      h.model.enqueue(textReply('Hi Alice, happy to help.'));
      const m = mail({ subject: 'Question about tea', text: 'Which tea is best?', image: true });
      // The same mail in the mailbox three times (a client that retried, a copy filed twice).
      for (let i = 0; i < 3; i++) await imap.deliver(BOT, m.raw);
      await smtp.until(() => smtp.to(ALICE).length >= 1, 30_000, 'the reply');
      await sleep(1500);
      const sent = smtp.to(ALICE);
      assert.equal(sent.length, 1);
      const reply = sent[0]!;
      assert.equal(reply.user, BOT, 'SMTP AUTH with the IMAP user and the SMTP password');
      assert.equal(reply.parsed.text?.trim(), 'Hi Alice, happy to help.');
      assert.equal(reply.parsed.subject, 'Re: Question about tea');
      assert.equal(reply.parsed.inReplyTo, m.id);
      assert.deepEqual(reply.parsed.references, m.id);
      assert.equal(reply.parsed.from?.value[0]?.address, BOT);
      assert.equal(requestsWith('Which tea is best?').length, 1, 'one turn');
      const last = JSON.stringify(h.model.requests.at(-1)!.body.messages);
      assert.match(last, /image/i, 'the attached image handed to the turn');
      const instance = okData<Array<{ id: string; owners: string[] }>>(
        await api.get('/api/im-channels/instances'),
      ).find((i) => i.id === instanceId)!;
      assert.deepEqual(instance.owners, [ALICE], 'the first sender claims the instance');
      const sessions = okData<Array<{ chatId: string; chatType: string; channel: string; displayName: string }>>(
        await api.get(`/api/im-sessions?appId=${appId}`),
      );
      assert.deepEqual(
        sessions.map((s) => [s.channel, s.chatType, s.chatId, s.displayName]),
        [['email', 'direct', chatOf(ALICE, m.id), 'Question about tea']],
      );

      // Alice answers the reply, quoting it: the same thread continues, the quote left out.
      h.model.enqueue(textReply('Green, then.'));
      const replyId = reply.parsed.messageId!;
      await deliver({
        subject: 'Re: Question about tea',
        text: `And for the evening?\n\nOn Sat, Chatty wrote:\n> Hi Alice, happy to help.`,
        inReplyTo: replyId,
        references: [m.id, replyId],
      });
      await smtp.until(() => smtp.to(ALICE).length >= 2, 30_000, 'the second reply');
      const second = smtp.to(ALICE)[1]!;
      assert.equal(second.parsed.text?.trim(), 'Green, then.');
      assert.equal(second.parsed.subject, 'Re: Question about tea');
      const refs = [second.parsed.references].flat();
      assert.equal(refs[0], m.id, 'the conversation root first');
      assert.ok(refs.includes(replyId));
      const messages = okData<Array<{ role: string; content: string }>>(
        await api.get(
          `/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=${encodeURIComponent(chatOf(ALICE, m.id))}`,
        ),
      );
      assert.deepEqual(
        messages.map((x) => [x.role, x.content]),
        [
          ['user', 'Which tea is best?'],
          ['assistant', 'Hi Alice, happy to help.'],
          ['user', 'And for the evening?'],
          ['assistant', 'Green, then.'],
        ],
      );
      assert.equal(okData<unknown[]>(await api.get(`/api/im-sessions?appId=${appId}`)).length, 1, 'still one thread');
    });

    it('/stop (as the first line) stops the running turn; /clear (as the subject) starts afresh', async () => {
      const root = mail({ subject: 'Essay', text: 'Write me an essay' });
      const chatId = chatOf(ALICE, root.id);
      h.model.enqueue({ steps: [{ text: 'Working on it' }, { hang: true }] });
      const ws = await h.subscribed(`app-chat:${appId}:email:direct:${chatId}`);
      await imap.deliver(BOT, root.raw);
      await ws.event('agent:message', 20_000);
      await deliver({ subject: 'Re: Essay', text: '/stop\n\nthanks', inReplyTo: root.id, references: [root.id] });
      const error = await ws.event('agent:error', 20_000);
      assert.equal(error.data!.errorType, 'interrupted');
      await smtp.until(
        () => smtp.to(ALICE).some((x) => x.parsed.text?.trim() === 'Stopped.'),
        20_000,
        'the stop answer',
      );
      const stopped = smtp.to(ALICE).find((x) => x.parsed.text?.trim() === 'Stopped.')!;
      assert.equal([stopped.parsed.references].flat()[0], root.id, 'in the conversation');
      ws.close();
      await deliver({ subject: 'Re: /clear', text: '', inReplyTo: root.id, references: [root.id] });
      await smtp.until(
        () => smtp.to(ALICE).some((x) => x.parsed.text?.trim().startsWith('Cleared.') === true),
        20_000,
        'the clear answer',
      );
      const messages = okData<unknown[]>(
        await api.get(
          `/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=${encodeURIComponent(chatId)}`,
        ),
      );
      assert.deepEqual(messages, []);
    });

    it('a guest chats without tools that write or run; under "deny" a guest gets a refusal and no turn', async () => {
      h.model.enqueue(textReply('Hello guest.'));
      await deliver({ from: BOB, fromName: 'Bob', subject: 'Hi', text: 'Who are you?' });
      await smtp.until(() => smtp.to(BOB).length >= 1, 30_000, 'the guest reply');
      const tools = (h.model.requests.at(-1)!.body as { tools?: Array<{ name: string }> }).tools ?? [];
      const names = tools.map((t) => t.name);
      for (const forbidden of ['Write', 'Edit', 'Bash']) assert.ok(!names.includes(forbidden), names.join());
      assert.ok(names.includes('Read'));
      okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'deny' }));
      const before = h.model.requests.length;
      await deliver({ from: BOB, fromName: 'Bob', subject: 'Again', text: 'Hello?' });
      await smtp.until(() => smtp.to(BOB).length >= 2, 30_000, 'the refusal');
      assert.equal(smtp.to(BOB)[1]!.parsed.text?.trim(), 'Sorry, I only answer my owners here.');
      await sleep(500);
      assert.equal(h.model.requests.length, before);
      okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'chat-only' }));
    });

    it('a long reply is one mail; an SMTP server down for a moment is retried; our own and automatic mail is not answered', async () => {
      const long = Array.from({ length: 400 }, (_, i) => `Line ${i}: ${'lorem ipsum '.repeat(8).trim()}`).join('\n');
      assert.ok(long.length > 30_000);
      h.model.enqueue(textReply(long, { chunks: 10 }));
      const before = smtp.to(ALICE).length;
      smtp.failNext = 1;
      await deliver({ subject: 'Story', text: 'Tell me a long story' });
      await smtp.until(() => smtp.to(ALICE).length > before, 60_000, 'the long reply');
      await sleep(1500);
      const sent = smtp.to(ALICE).slice(before);
      assert.equal(sent.length, 1, 'one mail');
      assert.equal(sent[0]!.parsed.text?.trim(), long);

      const requests = h.model.requests.length;
      await deliver({ from: BOT, fromName: 'Chatty', subject: 'Loop?', text: 'my own mail' });
      const auto = mail({ subject: 'Out of office', text: 'I am away' });
      await imap.deliver(BOT, auto.raw.replace('MIME-Version', 'Auto-Submitted: auto-replied\r\nMIME-Version'));
      await sleep(3000);
      assert.equal(h.model.requests.length, requests, 'no turn for our own or an automatic mail');
    });

    it('a dropped IMAP connection is made again, and mail that came meanwhile is read', async () => {
      const reconnected = imap.opened;
      imap.dropAll();
      h.model.enqueue(textReply('Still here.'));
      await deliver({ subject: 'After the drop', text: 'are you there?' });
      await smtp.until(
        () => smtp.to(ALICE).some((x) => x.parsed.text?.trim() === 'Still here.'),
        40_000,
        'the reply after reconnecting',
      );
      assert.ok(imap.opened > reconnected);
      assert.equal(imap.connections, 1, 'one connection again');
    });
  },
);

/**
 * IMAP is a connection: across two replicas exactly one holds it (the instance's lease); when
 * that one is killed, the other connects within 30 s and reads the mail that came meanwhile, and
 * no mail is answered twice.
 */
describe(
  'message channels: email across replicas',
  { skip: testMode() !== 'services' ? 'needs Redis' : dovecotInstalled() ? false : 'dovecot not installed' },
  () => {
    let replicas: Replicas;
    let imap: DovecotServer;
    let smtp: CapturingSmtpServer;
    let redis: Redis;
    let instanceId: string;
    const answers = (n: string) => smtp.to(ALICE).filter((m) => m.parsed.text?.trim() === `echo: ${n}`).length;

    before(async () => {
      imap = await DovecotServer.start({ [BOT]: BOT_PASSWORD });
      smtp = await CapturingSmtpServer.start({ [BOT]: BOT_PASSWORD });
      replicas = await startReplicas({ env: { SVC_CHANNEL_ALLOW: '127.0.0.1' } });
      replicas.model.respond((req) => textReply(`echo: ${lastUserTextOf(req.body)}`));
      redis = new Redis(replicas.services.redisUrl);
      const a = apiClient(replicas.a);
      const spaceId = okData<{ id: string }>(await a.post('/api/spaces', { name: 'Replicated mail' })).id;
      const appId = okData<{ appId: string }>(await a.post('/api/apps/install', { spec: spec('Echo'), spaceId })).appId;
      instanceId = okData<{ id: string }>(
        await a.post('/api/im-channels/instances', {
          type: 'email',
          name: 'Echo by mail',
          appId,
          config: {
            imapHost: '127.0.0.1',
            imapPort: String(imap.port),
            imapTls: 'none',
            imapUser: BOT,
            imapPassword: BOT_PASSWORD,
            smtpHost: '127.0.0.1',
            smtpPort: String(smtp.port),
            smtpTls: 'none',
            fromAddress: BOT,
          },
        }),
      ).id;
    });
    after(async () => {
      redis?.disconnect();
      await replicas?.stop();
      await smtp?.close();
      await imap?.close();
    });

    it('one replica holds IMAP; killed, the other takes over within 30 s; every mail answered once', async (t) => {
      await waitFor(
        async () =>
          okData<Array<{ state: string }>>(
            await apiClient(replicas.a).get(`/api/im-channels/status?instanceId=${instanceId}`),
          )[0]!.state === 'online',
        30_000,
        'online',
      );
      const send = (n: string) =>
        imap.deliver(BOT, mail({ subject: n, text: n, messageId: `<${n}.${Date.now()}@client.example.test>` }).raw);
      for (let i = 1; i <= 3; i++) {
        await send(`m${i}`);
        await smtp.until(() => answers(`m${i}`) >= 1, 30_000, `the answer to m${i}`);
      }
      await waitFor(async () => imap.connections === 1, 10_000, 'one IMAP connection for two replicas');
      await sleep(1000);
      assert.equal(imap.connections, 1, 'one IMAP connection held for two replicas');
      const holder = await redis.get(`${replicas.services.redisPrefix}:lease:channel-connection:${instanceId}`);
      assert.ok(holder, 'the lease is held');
      const pid = Number(holder.split('-')[0]);
      const victim = [replicas.a, replicas.b].find((s) => s.process.pid === pid);
      assert.ok(victim, 'the holder is one of the replicas');
      const opened = imap.opened;
      victim.process.kill('SIGKILL');
      await victim.exited;
      const killedAt = Date.now();
      await send('m4');
      await waitFor(async () => imap.opened > opened, 30_000, 'IMAP taken over');
      const takeoverMs = Date.now() - killedAt;
      t.diagnostic(`IMAP taken over ${takeoverMs} ms after the holder was killed`);
      await smtp.until(() => answers('m4') >= 1, 60_000, 'the answer to m4 after the kill');
      await send('m5');
      await smtp.until(() => answers('m5') >= 1, 30_000, 'the answer to m5');
      await sleep(2000);
      for (let i = 1; i <= 5; i++) assert.equal(answers(`m${i}`), 1, `m${i} answered once`);
      // Whichever replica sent a reply (not always the one that read the mail), it is threaded.
      for (let i = 1; i <= 5; i++) {
        const reply = smtp.to(ALICE).find((m) => m.parsed.text?.trim() === `echo: m${i}`)!;
        assert.equal(reply.parsed.subject, `Re: m${i}`);
        assert.match(String(reply.parsed.inReplyTo), new RegExp(`^<m${i}\\.`));
      }
      await waitFor(async () => imap.connections === 1, 10_000, 'one IMAP connection again');
      await replicas.replace(victim);
    });
  },
);
