import { createHash, createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { AgentHarness } from '#testing/agent-harness.js';
import { deepJson, type Res, Tally } from '#testing/hostile-tally.js';
import { testMode } from '#testing/test-env.js';
import { printServerLines } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';

/**
 * Hostile suites of the surfaces that take input from outside (issue 33): message channels
 * (signed webhooks in, replies out to a callback URL) and teams (ids, graphs, bodies). Each drives the real server over HTTP
 * with a table of hostile inputs and prints, per surface: inputs tried, handled cleanly (the
 * expected 4xx, or accepted where that is right, nothing changed that should not), 500s
 * (must be 0), escapes (must be 0) and the longest stall of `/api/remote/status` meanwhile.
 * The AI browser's suite is in `hostile-browser.e2e-spec.ts` (it needs chromium); knowledge-base
 * ingestion's in `hostile-knowledge.e2e-spec.ts` (a file of its own: it ingests a batch of bombs,
 * which takes a while on a loaded 2-core machine, and a file has 180 s in all).
 */

const OUTSIDE_SECRET = 'hostile-surface-outside-7';
const SECRET = 'surface-s3cret';
const sign = (raw: string | Buffer, secret = SECRET) => createHmac('sha256', secret).update(raw).digest('hex');

describe(`hostile inputs to channels and teams (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let root: string;
  let importRoot: string;
  let outside: string;
  /** Loopback listener on every address: anything a refused callback would have reached. */
  let sink: http.Server;
  let sinkPort: number;
  const sinkHits: string[] = [];
  let spaceId: string;
  let appId: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-hostile-surfaces-'));
    importRoot = join(root, 'imports');
    outside = join(root, 'outside');
    mkdirSync(importRoot);
    mkdirSync(outside);
    mkdirSync(`${importRoot}-evil`);
    writeFileSync(join(outside, 'secret.md'), `# Outside\n\n${OUTSIDE_SECRET}\n`);
    writeFileSync(join(`${importRoot}-evil`, 'secret.md'), `# Sibling\n\n${OUTSIDE_SECRET}\n`);
    writeFileSync(join(importRoot, 'ok.md'), '# Fine\n\nAllowed import.\n');
    symlinkSync(outside, join(importRoot, 'link-out'));
    symlinkSync(join(outside, 'secret.md'), join(importRoot, 'link-file.md'));
    sink = http.createServer((req, res) => {
      sinkHits.push(`${req.method} ${req.headers.host}${req.url}`);
      res.end('{}');
    });
    await new Promise<void>((resolve) => sink.listen(0, '::', resolve));
    sinkPort = (sink.address() as AddressInfo).port;
    // SVC_CHANNEL_ALLOW names 127.0.0.1 only: every other loopback, private and link-local
    // callback is refused.
    await h.start({ SVC_KB_IMPORT_ROOTS: importRoot, SVC_CHANNEL_ALLOW: '127.0.0.1' });
    const space = okData<{ id: string; path: string }>(await api.post('/api/spaces', { name: 'Hostile surfaces' }));
    spaceId = space.id;
    appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: {
          spec_version: '1',
          name: 'Hostile target',
          version: '1.0.0',
          author: 'alice',
          description: 'Answers in chat.',
          type: 'automation',
          system_prompt: 'You help.',
          subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
        },
        spaceId,
      }),
    ).appId;
  });
  after(async () => {
    await h.stop();
    await new Promise((resolve) => sink?.close(resolve));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('channels: bad signatures, odd and oversized bodies, NUL and lone surrogates, deep nesting, replays, internal callback URLs', async (t) => {
    const tally = new Tally('channels');
    const instanceId = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'webhook',
        name: 'Hostile hook',
        appId,
        config: { secret: SECRET, callbackUrl: `http://127.0.0.1:${sinkPort}/callback` },
      }),
    ).id;
    /** POSTs these exact bytes (supertest would serialise a Buffer as JSON). */
    const post = (id: string, raw: string | Buffer, headers: Record<string, string> = {}) =>
      new Promise<Res>((resolve) => {
        const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
        const req = http.request(
          `${h.server.url}/hooks/channels/${id}`,
          {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Content-Length': bytes.length, ...headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let body: unknown = text;
              try {
                body = JSON.parse(text);
              } catch {
                /* not JSON */
              }
              resolve({ status: res.statusCode ?? 0, body });
            });
          },
        );
        req.on('error', (err) => resolve({ status: 413, text: `connection closed: ${err.message}` }));
        req.end(bytes);
      });
    const signed = (raw: string | Buffer, headers: Record<string, string> = {}) =>
      post(instanceId, raw, { 'X-Hub-Signature-256': `sha256=${sign(raw)}`, ...headers });
    const message = (extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        messageId: randomUUID(),
        chatId: 'chat-hostile',
        chatType: 'direct',
        from: { id: 'u-hostile' },
        text: 'hello',
        ...extra,
      });
    const claimsBefore = h.model.requests.length;
    tally.startProbe(h.server.url);

    // Signatures: all 401, nothing started.
    const body = message();
    const badSignatures: Array<[string, Record<string, string>]> = [
      ['no signature', {}],
      ['another secret', { 'X-Hub-Signature-256': `sha256=${sign(body, 'guess')}` }],
      ['empty hex', { 'X-Hub-Signature-256': 'sha256=' }],
      ['not hex', { 'X-Hub-Signature-256': `sha256=${'z'.repeat(64)}` }],
      ['short hex', { 'X-Hub-Signature-256': `sha256=${sign(body).slice(0, 10)}` }],
      ['long hex', { 'X-Hub-Signature-256': `sha256=${sign(body)}00` }],
      ['no prefix', { 'X-Hub-Signature-256': sign(body) }],
      ['sha1 of the body', { 'X-Hub-Signature-256': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}` }],
      ['sha256 without key', { 'X-Hub-Signature-256': `sha256=${createHash('sha256').update(body).digest('hex')}` }],
      ['signature of another body', { 'X-Hub-Signature-256': `sha256=${sign(message())}` }],
      ['8 KB header', { 'X-Hub-Signature-256': `sha256=${'a'.repeat(8192)}` }],
      ['NUL in header', { 'X-Hub-Signature-256': `sha256=${sign(body).slice(0, 30)}%00` }],
    ];
    for (const [what, headers] of badSignatures)
      tally.check(`signature: ${what}`, await post(instanceId, body, headers), [401]);

    // Instance ids.
    for (const id of [randomUUID(), 'not-a-uuid', '..%2F..%2Fapi%2Fspaces', '%00', 'x'.repeat(2000), '%ED%A0%80']) {
      tally.check(
        `instance id ${id.slice(0, 40)}`,
        await post(id, body, { 'X-Hub-Signature-256': `sha256=${sign(body)}` }),
        [400, 404],
      );
    }

    // Bodies, correctly signed: 400 naming what is wrong, 413 over the limit.
    const bodies: Array<[string, string | Buffer, number[]]> = [
      ['not JSON', 'not json', [400]],
      ['empty', '', [400]],
      ['array', '[]', [400]],
      ['null', 'null', [400]],
      ['string', '"hello"', [400]],
      ['number', '42', [400]],
      ['empty object', '{}', [400]],
      ['text a number', message({ text: 123 }), [400]],
      ['chatType unknown', message({ chatType: 'channel' }), [400]],
      ['from a string', message({ from: 'u-1' }), [400]],
      ['messageId empty', message({ messageId: '' }), [400]],
      ['images not a list', message({ images: 'x' }), [400]],
      ['images of nulls', message({ images: [null] }), [400]],
      ['mentioned a string', message({ mentioned: 'yes' }), [400]],
      ['NUL in text', message({ text: 'a\u0000b' }), [400]],
      ['NUL in chatId', message({ chatId: 'c\u0000' }), [400]],
      ['NUL in from.name', message({ from: { id: 'u', name: '\u0000' } }), [400]],
      ['lone surrogate in text', message({ text: 'x' }).replace('"x"', '"\\ud800"'), [400]],
      ['lone surrogate in chatName', message({ chatName: 'x' }).replace('"x"', '"\\udc00y"'), [400]],
      ['NUL in a key', message({ 'k\u0000': 1 }), [400]],
      ['nested 5,000 deep', message({ extra: 'DEEP' }).replace('"DEEP"', deepJson(5000)), [400]],
      ['nested 100,000 deep', message({ extra: 'DEEP' }).replace('"DEEP"', deepJson(100_000)), [400, 413]],
      [
        'invalid UTF-8',
        Buffer.concat([Buffer.from(message().slice(0, -1)), Buffer.from(',"x":"\xff\xfe"}', 'latin1')]),
        [200, 400],
      ],
      ['over the size limit (300 KB)', message({ text: 'y'.repeat(300 * 1024) }), [413]],
      ['text/plain content type', message(), [200, 400, 415]],
    ];
    const refusedMarkers: string[] = [];
    for (const [i, [what, raw, allowed]] of bodies.entries()) {
      const headers: Record<string, string> =
        what === 'text/plain content type' ? { 'Content-Type': 'text/plain' } : {};
      // Each body carries its own text, so a turn can be traced back to the delivery that started it.
      const marked = typeof raw === 'string' ? raw.replace('"hello"', `"body case ${i} end"`) : raw;
      const res = await signed(marked, headers);
      if (res.status !== 200) refusedMarkers.push(`body case ${i} end`);
      tally.check(`body: ${what}`, res, allowed);
    }
    const oversized = Buffer.alloc(2 * 1024 * 1024, 'x');
    tally.check(
      'body: 2 MB unsigned',
      await post(instanceId, oversized).catch((err: Error) => ({
        status: 413,
        text: `connection closed: ${err.message}`,
      })),
      [401, 413],
    );

    // A replay of one signed delivery: both acknowledged, one turn.
    const replay = message({ text: 'replayed once', chatId: 'chat-replay', from: { id: 'u-replay' } });
    tally.check('replay 1', await signed(replay), [200]);
    tally.check('replay 2', await signed(replay), [200]);
    tally.check('replay 3', await signed(replay), [200]);
    await waitFor(
      () => h.model.requests.some((r) => JSON.stringify(r.body.messages ?? '').includes('replayed once')),
      30_000,
      'the replayed message to be answered',
    ).catch(() => {
      printServerLines(h.server, 30);
      tally.escape('the replayed (accepted) message never reached the model');
    });
    await sleep(2_000);
    const turns = h.model.requests
      .slice(claimsBefore)
      .filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes('replayed once')).length;
    if (turns !== 1) tally.escape(`a replayed delivery started ${turns} turns`);
    // No refused delivery reached the model.
    for (const marker of refusedMarkers) {
      if (h.model.requests.slice(claimsBefore).some((r) => JSON.stringify(r.body.messages ?? '').includes(marker)))
        tally.escape(`a refused delivery (${marker}) started a turn`);
    }

    // Callback URLs to internal addresses: refused at create, or the reply is blocked (the
    // instance goes offline naming the policy) and nothing reaches the address.
    // The operator allows 127.0.0.1 (the replies of the instance above); every other internal
    // address, in any spelling, stays refused.
    const callbacks = [
      `http://127.0.0.2:${sinkPort}/other-loopback`,
      `http://0x7f000002:${sinkPort}/hex`,
      `http://2130706434:${sinkPort}/decimal`,
      `http://0177.0.0.2:${sinkPort}/octal`,
      `http://127.2:${sinkPort}/short`,
      `http://[::1]:${sinkPort}/v6`,
      `http://[::ffff:127.0.0.2]:${sinkPort}/mapped`,
      `http://[::ffff:7f00:2]:${sinkPort}/mapped-hex`,
      `http://0.0.0.0:${sinkPort}/any`,
      `http://[::]:${sinkPort}/v6-any`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.0.1/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'file:///etc/passwd',
      'gopher://127.0.0.2:70/',
      'ftp://127.0.0.2/',
    ];
    const waiting: Array<{ url: string; id: string }> = [];
    for (const [i, callbackUrl] of callbacks.entries()) {
      const created = await api.post('/api/im-channels/instances', {
        type: 'webhook',
        name: `Callback ${i}`,
        appId,
        config: { secret: SECRET, callbackUrl },
      });
      tally.check(`callback ${callbackUrl}: create`, created, [200, 400]);
      if (created.status !== 200) continue;
      const id = (created.body as { data: { id: string } }).data.id;
      const raw = JSON.stringify({
        messageId: `cb-${i}`,
        chatId: `chat-cb-${i}`,
        chatType: 'direct',
        from: { id: `u-cb-${i}` },
        text: `callback ${i}`,
      });
      tally.check(
        `callback ${callbackUrl}: delivery`,
        await post(id, raw, { 'X-Hub-Signature-256': `sha256=${sign(raw)}` }),
        [200],
      );
      waiting.push({ url: callbackUrl, id });
    }
    for (const { url, id } of waiting) {
      const blocked = async () => {
        const [status] = okData<Array<{ state: string; reason: string | null }>>(
          await api.get(`/api/im-channels/status?instanceId=${id}`),
        );
        return status?.state === 'offline' && /blocked by the channel policy/.test(status.reason ?? '');
      };
      const refused = await waitFor(blocked, 30_000, `the callback ${url} refused`).then(
        () => true,
        () => false,
      );
      if (!refused) tally.escape(`callback ${url} was not refused`);
      okData(await api.delete(`/api/im-channels/instances/${id}`));
    }
    const reached = sinkHits.filter((hit) => !hit.includes('/callback'));
    if (reached.length > 0) tally.escape(`the loopback listener was reached: ${reached.join(', ')}`);
    tally.stopProbe();
    okData(await api.delete(`/api/im-channels/instances/${instanceId}`));
    tally.verdict(t);
  });

  it('teams: bad ids on every route, NUL and lone surrogates, deep and oversized bodies, cyclic and duplicate edges', async (t) => {
    const tally = new Tally('teams');
    const member = async (name: string) =>
      okData<{ appId: string }>(
        await api.post('/api/apps/install', {
          spec: {
            spec_version: '1',
            name,
            version: '1.0.0',
            author: 'alice',
            description: `${name} of the hostile team.`,
            type: 'automation',
            system_prompt: `You are ${name}.`,
          },
          spaceId,
        }),
      ).appId;
    const a = await member('Alpha');
    const b = await member('Beta');
    const team = okData<{ id: string }>(
      await api.post('/api/teams', {
        input: {
          name: 'Hostile team',
          goal: 'Hold.',
          owningSpaceId: spaceId,
          leadAppId: a,
          members: [{ appId: b, memberName: 'Beta' }],
        },
      }),
    );
    tally.startProbe(h.server.url);
    const badIds = ['not-a-uuid', randomUUID(), '%00', '%ED%A0%80', '..%2F..%2Fapps', 'x'.repeat(3000), "1' OR '1'='1"];
    for (const id of badIds) {
      const short = id.slice(0, 30);
      tally.check(`GET team ${short}`, await api.get(`/api/teams/${id}`), [400, 404]);
      tally.check(`detail ${short}`, await api.get(`/api/teams/${id}/detail`), [400, 404]);
      tally.check(`PATCH team ${short}`, await api.patch(`/api/teams/${id}`, { name: 'x' }), [400, 404]);
      tally.check(`run ${short}`, await api.post(`/api/teams/${id}/run`, {}), [400, 404]);
      tally.check(`edges ${short}`, await api.put(`/api/teams/${id}/edges`, { edges: [] }), [400, 404]);
      tally.check(
        `member PATCH ${short}`,
        await api.patch(`/api/teams/${team.id}/members/${id}`, { role: 'x' }),
        [400, 404],
      );
      tally.check(`member DELETE ${short}`, await api.delete(`/api/teams/${team.id}/members/${id}`), [400, 404]);
      tally.check(
        `member send ${short}`,
        await api.post(`/api/teams/${team.id}/members/${id}/send`, { message: 'hi' }),
        [400, 404],
      );
      tally.check(`board ${short}`, await api.get(`/api/teams/${team.id}/epochs/${id}/board`), [400, 404]);
      tally.check(
        `epoch PATCH ${short}`,
        await api.patch(`/api/teams/${team.id}/conversations/${id}`, { title: 'x' }),
        [400, 404],
      );
      tally.check(`trigger DELETE ${short}`, await api.delete(`/api/teams/${team.id}/triggers/${id}`), [400, 404]);
      tally.check(
        `chat-messages ${short}`,
        await api.get(`/api/teams/${team.id}/chat-messages?appId=${encodeURIComponent(id)}`),
        [400, 404],
      );
    }
    const create = (input: unknown) => api.post('/api/teams', { input });
    const base = { name: 'T', goal: 'G', owningSpaceId: spaceId, leadAppId: a };
    const bodies: Array<[string, () => request.Test, number[]]> = [
      ['NUL in name', () => create({ ...base, name: 'a\u0000b' }), [400]],
      ['lone surrogate in goal', () => create({ ...base, goal: '\ud800' }), [400]],
      ['NUL in a member name', () => create({ ...base, members: [{ appId: b, memberName: '\u0000' }] }), [400]],
      ['NUL in a key', () => create({ ...base, 'k\u0000': 1 }), [400]],
      ['input a string', () => create('x'), [400]],
      ['input a list', () => create([]), [400]],
      ['members not a list', () => create({ ...base, members: 'b' }), [400]],
      ['a member without appId', () => create({ ...base, members: [{}] }), [400]],
      [
        'a member not installed',
        () => create({ ...base, members: [{ appId: randomUUID(), memberName: 'X' }] }),
        [400, 404],
      ],
      ['a member id not a uuid', () => create({ ...base, members: [{ appId: '../x', memberName: 'X' }] }), [400, 404]],
      ['owningSpaceId unknown', () => create({ ...base, owningSpaceId: randomUUID() }), [400, 404]],
      ['unknown collabMode', () => create({ ...base, collabMode: 'anarchy' }), [400]],
      ['nested 80 deep', () => create({ ...base, extra: JSON.parse(deepJson(80)) as unknown }), [400]],
      ['over the body limit (2 MB)', () => create({ ...base, goal: 'g'.repeat(2 * 1024 * 1024) }), [413]],
      [
        'the lead as its own member twice',
        () =>
          create({
            ...base,
            members: [
              { appId: a, memberName: 'A1' },
              { appId: a, memberName: 'A2' },
            ],
          }),
        [200, 400, 409],
      ],
      [
        '10,000 members',
        () =>
          create({ ...base, members: Array.from({ length: 10_000 }, (_, i) => ({ appId: b, memberName: `m${i}` })) }),
        [200, 400, 409, 413],
      ],
      ['PATCH with NUL', () => api.patch(`/api/teams/${team.id}`, { name: 'x\u0000' }), [400]],
      ['PATCH name a number', () => api.patch(`/api/teams/${team.id}`, { name: 5 }), [400]],
      ['send a NUL message', () => api.post(`/api/teams/${team.id}/members/${b}/send`, { message: '\u0000' }), [400]],
      [
        'add member with lone surrogate',
        () => api.post(`/api/teams/${team.id}/members`, { appId: b, memberName: '\udfff' }),
        [400],
      ],
    ];
    for (const [what, send, allowed] of bodies) tally.check(`body: ${what}`, await send(), allowed);
    // Edges: cycles are a graph the team may have (messages are bounded at run time by the
    // forward-depth limit, teams e2e); duplicates and junk are refused or folded, never a 500.
    const edges: Array<[string, unknown, number[]]> = [
      [
        'a cycle',
        [
          { fromAppId: a, toAppId: b },
          { fromAppId: b, toAppId: a },
        ],
        [200, 400],
      ],
      ['a self-loop', [{ fromAppId: a, toAppId: a }], [200, 400]],
      [
        'a duplicate edge',
        [
          { fromAppId: a, toAppId: b },
          { fromAppId: a, toAppId: b },
        ],
        [200, 400],
      ],
      [
        'the same edge in two cases',
        [
          { fromAppId: a, toAppId: b },
          { fromAppId: a.toUpperCase(), toAppId: b },
        ],
        [200, 400],
      ],
      [
        '5,000 copies of one edge',
        Array.from({ length: 5_000 }, () => ({ fromAppId: a, toAppId: b })),
        [200, 400, 413],
      ],
      ['edges not a list', 'x', [400]],
      ['an edge of numbers', [{ fromAppId: 1, toAppId: 2 }], [400]],
      ['an edge of nulls', [null], [400]],
      ['an edge to a stranger', [{ fromAppId: a, toAppId: randomUUID() }], [400]],
      ['an edge with NUL', [{ fromAppId: `${a}\u0000`, toAppId: b }], [400]],
    ];
    for (const [what, list, allowed] of edges) {
      tally.check(`edges: ${what}`, await api.put(`/api/teams/${team.id}/edges`, { edges: list }), allowed);
    }
    const detail = okData<{ edges: Array<{ fromAppId: string; toAppId: string }> }>(
      await api.get(`/api/teams/${team.id}/detail`),
    );
    const keys = detail.edges.map((e) => `${e.fromAppId}>${e.toAppId}`);
    if (new Set(keys).size !== keys.length) tally.escape(`duplicate edges stored: ${keys.join(', ')}`);
    tally.stopProbe();
    tally.verdict(t);
  });
});
