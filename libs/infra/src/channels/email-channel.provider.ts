import { createHash } from 'node:crypto';
import type { ImapFlow } from 'imapflow';
import type { ParsedMail } from 'mailparser';
import type { ChannelConfigField } from '#contracts/channels.js';
import {
  type ChannelConnection,
  ChannelError,
  ChannelProvider,
  type ConnectionSink,
  type InboundMessage,
  type OutboundTarget,
} from '#core/channels/channel-provider.port.js';
import { parseCommand } from '#core/channels/channel-rules.js';
import type { ChannelInstanceRecord } from '#core/ports/channel.repository.port.js';
import { loadOnce } from '../common/load-once.js';
import type { ChannelFetch } from './channel-fetch.js';
import { abortableSleep } from './channel-fetch.js';

/**
 * The mail libraries (imapflow, mailparser, nodemailer: ~230 modules), loaded when an email
 * instance first connects, parses or sends rather than with every server's start.
 */
const mailLibraries = loadOnce(async () => {
  const [imap, parser, mailer] = await Promise.all([import('imapflow'), import('mailparser'), import('nodemailer')]);
  return { ImapFlow: imap.ImapFlow, simpleParser: parser.simpleParser, nodemailer: mailer.default };
});

/** Email has no message length limit worth splitting at: a reply is one mail. */
export const EMAIL_MAX_MESSAGE = 1_000_000;
/** A mailbox is checked this often even when IDLE reports nothing (a server without IDLE, a lost notice). */
export const EMAIL_POLL_MS = 30_000;
/**
 * The longest sender address answered, as written in a chat id (emailChatId): a conversation id
 * is at most 128 characters, `app-chat:<appId>:email:direct:` takes 59 and the root's hash 13.
 */
export const EMAIL_MAX_ADDRESS = 56;
/** Back-off between failed IMAP connections after the first (then it stays at the last). */
const RECONNECT_BACKOFF_MS = [2_000, 5_000, 10_000, 30_000];
/** Mails fetched in one pass (the rest in the next). */
const FETCH_BATCH = 50;
/** A mail larger than this is skipped (never parsed). */
const MAX_MAIL_BYTES = 25 * 1024 * 1024;
/** Images handed to the turn, per mail, and their largest size. */
const MAX_IMAGES = 4;
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const TIMEOUT_MS = 15_000;

type Tls = 'tls' | 'starttls' | 'none';
const TLS_MODES: readonly Tls[] = ['tls', 'starttls', 'none'];

/** What a reply needs of the mail it answers (Subject, References): kept by the replica that read it. */
interface Known {
  subject: string;
  references: string[];
}

/**
 * Email (docs/api/channels.md, "Email"): IMAP in, SMTP out. The lease holder keeps one IMAP
 * connection (imapflow: IDLE where the server has it, else NOOP polling; a full check every
 * EMAIL_POLL_MS as well) on the configured mailbox and reads each new mail once (its UID is the
 * cursor, kept across replicas); replies leave from any replica by SMTP (nodemailer). Both are
 * well-kept libraries by the same author, as is mailparser, which reads the mails.
 *
 * Thread mapping: a thread is an email conversation, direct only. Its chatId is the sender's
 * address and the conversation's root Message-ID (the first of `References`, else
 * `In-Reply-To`, else the mail's own Message-ID): `alice@example.com <root@host>`. So each
 * conversation a person starts is its own thread with its own history, a reply to a reply stays
 * in it, and the address a reply goes to is in the chatId (any replica can send). The message
 * id is the mail's Message-ID, so the same mail seen three times starts one turn.
 */
export class EmailChannelProvider extends ChannelProvider {
  readonly type = 'email';
  readonly displayName = 'Email';
  readonly description =
    'A mailbox: mail read by IMAP (IDLE, else polling) and answered by SMTP in the same conversation.';
  readonly configFields: readonly ChannelConfigField[] = [
    { key: 'imapHost', label: 'IMAP host', type: 'string', required: true, description: 'e.g. imap.example.com' },
    {
      key: 'imapPort',
      label: 'IMAP port',
      type: 'string',
      required: false,
      description: 'Default 993 with TLS, else 143',
    },
    {
      key: 'imapTls',
      label: 'IMAP security',
      type: 'string',
      required: false,
      description: '"tls" (default), "starttls" or "none"',
    },
    { key: 'imapUser', label: 'IMAP user', type: 'string', required: true },
    { key: 'imapPassword', label: 'IMAP password', type: 'secret', required: true },
    {
      key: 'mailbox',
      label: 'Mailbox',
      type: 'string',
      required: false,
      description: 'The folder read (default INBOX)',
    },
    { key: 'smtpHost', label: 'SMTP host', type: 'string', required: true, description: 'e.g. smtp.example.com' },
    {
      key: 'smtpPort',
      label: 'SMTP port',
      type: 'string',
      required: false,
      description: 'Default 465 with TLS, 587 with STARTTLS, else 25',
    },
    {
      key: 'smtpTls',
      label: 'SMTP security',
      type: 'string',
      required: false,
      description: '"starttls" (default), "tls" or "none"',
    },
    {
      key: 'smtpUser',
      label: 'SMTP user',
      type: 'string',
      required: false,
      description: 'Default: the IMAP user ("" for a server without authentication)',
    },
    {
      key: 'smtpPassword',
      label: 'SMTP password',
      type: 'secret',
      required: false,
      description: 'Default: the IMAP password',
    },
    {
      key: 'fromAddress',
      label: 'From address',
      type: 'string',
      required: true,
      description: 'The address replies are sent from (mail from it is never answered)',
    },
    { key: 'fromName', label: 'From name', type: 'string', required: false },
  ];
  readonly defaultConfig = { imapTls: 'tls', smtpTls: 'starttls', mailbox: 'INBOX' };
  readonly maxMessageLength = EMAIL_MAX_MESSAGE;

  /** Subject and References of mails read here, by Message-ID (what a reply carries). */
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly policy: ChannelFetch,
    private readonly pollMs = EMAIL_POLL_MS,
  ) {
    super();
  }

  override configProblem(config: Record<string, unknown>): string | null {
    for (const key of ['imapHost', 'smtpHost']) {
      const v = config[key];
      if (typeof v !== 'string' || !/^[A-Za-z0-9.:[\]-]+$/.test(v))
        return `config.${key} must be a host name or address`;
    }
    for (const key of ['imapPort', 'smtpPort']) {
      if (config[key] !== undefined && config[key] !== '' && port(config[key]) === null)
        return `config.${key} must be a port number (1-65535)`;
    }
    for (const key of ['imapTls', 'smtpTls']) {
      if (config[key] !== undefined && !TLS_MODES.includes(config[key] as Tls))
        return `config.${key} must be "tls", "starttls" or "none"`;
    }
    if (typeof config.fromAddress !== 'string' || !/^[^\s@<>]+@[^\s@<>]+$/.test(config.fromAddress))
      return 'config.fromAddress must be an email address';
    if (config.mailbox !== undefined && (typeof config.mailbox !== 'string' || config.mailbox.trim() === ''))
      return 'config.mailbox must be a folder name';
    return null;
  }

  // ── inbound: IMAP ────────────────────────────────────────────────────────────

  /**
   * The first connection is made here (a refused login throws a permanent ChannelError: the
   * instance goes offline with the server's words and is not retried); later drops reconnect
   * with back-off.
   */
  override async connect(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<ChannelConnection> {
    const first = await this.open(instance);
    const loop = this.hold(instance, sink, first);
    return {
      stop: async () => {
        await loop.catch(() => undefined);
      },
    };
  }

  private async hold(instance: ChannelInstanceRecord, sink: ConnectionSink, first: ImapFlow): Promise<void> {
    let client: ImapFlow | null = first;
    let failures = 0;
    while (!sink.signal.aborted) {
      try {
        client ??= await this.open(instance);
        await this.serve(instance, client, sink);
        failures = 0;
        if (sink.signal.aborted) return;
        throw new ChannelError('IMAP: the connection closed');
      } catch (err) {
        client = null;
        if (sink.signal.aborted) return;
        await sink.state('offline', err instanceof Error ? err.message : String(err));
        if (err instanceof ChannelError && err.permanent) return;
        const wait = RECONNECT_BACKOFF_MS[Math.min(failures, RECONNECT_BACKOFF_MS.length - 1)]!;
        failures += 1;
        await abortableSleep(wait, sink.signal).catch(() => undefined);
      }
    }
  }

  /** A logged-in IMAP connection with the mailbox selected. */
  private async open(instance: ChannelInstanceRecord): Promise<ImapFlow> {
    const c = instance.config;
    const host = String(c.imapHost ?? '');
    const target = await this.reach(host, 'IMAP');
    const tls = tlsMode(c.imapTls, 'tls');
    const { ImapFlow } = await mailLibraries();
    const client = new ImapFlow({
      host: target.address ?? host,
      ...(target.address !== null && target.address !== host ? { servername: host } : {}),
      port: port(c.imapPort) ?? (tls === 'tls' ? 993 : 143),
      secure: tls === 'tls',
      doSTARTTLS: tls === 'starttls' ? true : tls === 'none' ? false : undefined,
      auth: { user: String(c.imapUser ?? ''), pass: String(c.imapPassword ?? '') },
      logger: false,
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      maxIdleTime: 5 * 60_000,
      // IDLE one second after a pass (imapflow's default waits 15 s): new mail is seen at once.
      autoIdleDelay: 1_000,
    } as ConstructorParameters<typeof ImapFlow>[0]);
    // Errors surface through the calls (and 'close'); an unhandled 'error' event must not crash.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      client.close();
      const e = err as { authenticationFailed?: boolean; response?: string; responseText?: string; message?: string };
      if (e.authenticationFailed) {
        const said = serverWords(e.responseText ?? e.response) ?? 'authentication failed';
        throw new ChannelError(`IMAP login refused: ${said}`, true);
      }
      throw new ChannelError(`IMAP ${host}: ${e.message ?? String(err)}`);
    }
    const mailbox = typeof c.mailbox === 'string' && c.mailbox !== '' ? c.mailbox : 'INBOX';
    try {
      await client.mailboxOpen(mailbox);
    } catch (err) {
      await client.logout().catch(() => client.close());
      const e = err as { response?: string; responseText?: string; message?: string };
      const said = serverWords(e.responseText ?? e.response) ?? e.message ?? String(err);
      throw new ChannelError(`IMAP mailbox "${mailbox}": ${said}`, true);
    }
    return client;
  }

  /** Reads new mail until the connection closes or the lease is lost. */
  private async serve(instance: ChannelInstanceRecord, client: ImapFlow, sink: ConnectionSink): Promise<void> {
    const box = client.mailbox;
    if (!box || typeof box === 'boolean') throw new ChannelError('IMAP: no mailbox selected');
    const validity = String(box.uidValidity);
    // Where this instance stopped reading (kept across replicas); a new instance, or a mailbox
    // whose UIDVALIDITY changed, starts after the mail already there.
    const saved = (await sink.cursor())?.split(':');
    let last = saved && saved[0] === validity ? Number(saved[1]) : Math.max(0, Number(box.uidNext) - 1);
    if (!saved || saved[0] !== validity) await sink.setCursor(`${validity}:${last}`);
    await sink.state('online', null);

    let running: Promise<void> | null = null;
    let again = false;
    const pass = async (): Promise<void> => {
      const fresh: Array<{ uid: number; size: number }> = [];
      for await (const m of client.fetch(`${last + 1}:*`, { uid: true, size: true }, { uid: true })) {
        if (m.uid > last) fresh.push({ uid: m.uid, size: m.size ?? 0 });
      }
      fresh.sort((x, y) => x.uid - y.uid);
      const batch = fresh.slice(0, FETCH_BATCH);
      if (batch.length === 0) return;
      if (fresh.length > batch.length) again = true;
      const wanted = batch.filter((m) => m.size <= MAX_MAIL_BYTES).map((m) => m.uid);
      const sources = new Map<number, Buffer>();
      if (wanted.length > 0) {
        for await (const m of client.fetch(wanted.join(','), { uid: true, source: true }, { uid: true })) {
          if (m.source) sources.set(m.uid, m.source);
        }
      }
      for (const { uid } of batch) {
        if (sink.signal.aborted) return;
        const source = sources.get(uid);
        const message = source ? await this.toInbound(instance, source, `${validity}.${uid}`).catch(() => null) : null;
        // Claimed and queued before the cursor moves: a failure here reads it again next pass.
        if (message) await sink.receive(message);
        last = Math.max(last, uid);
        await sink.setCursor(`${validity}:${last}`);
      }
    };
    const check = () => {
      if (running) {
        again = true;
        return;
      }
      running = (async () => {
        do {
          again = false;
          await pass();
        } while (again && !sink.signal.aborted);
      })()
        .catch(() => {
          // A failed pass (the connection dropping) is seen as 'close'; otherwise the next check retries.
        })
        .finally(() => {
          running = null;
        });
    };

    await new Promise<void>((resolve) => {
      const timer = setInterval(check, this.pollMs);
      timer.unref?.();
      const finish = () => {
        clearInterval(timer);
        sink.signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        void client
          .logout()
          .catch(() => client.close())
          .finally(finish);
      };
      client.on('exists', check);
      client.on('close', finish);
      sink.signal.addEventListener('abort', abort, { once: true });
      check();
    });
    await (running as Promise<void> | null);
  }

  /** A mail as an inbound message; null for one not to answer (our own, an automatic one, empty). */
  private async toInbound(
    instance: ChannelInstanceRecord,
    source: Buffer,
    fallbackId: string,
  ): Promise<InboundMessage | null> {
    const { simpleParser } = await mailLibraries();
    const mail = await simpleParser(source, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true });
    const sender = mail.from?.value[0];
    const address = sender?.address?.trim().toLowerCase();
    if (!address) return null;
    const own = [instance.config.fromAddress, instance.config.imapUser].map((a) => String(a ?? '').toLowerCase());
    if (own.includes(address)) return null;
    const auto = header(mail, 'auto-submitted');
    if (auto && auto.toLowerCase() !== 'no') return null;
    const messageId = normaliseId(mail.messageId) ?? `<${fallbackId}@${String(instance.config.imapHost)}.imap>`;
    const references = idsOf(mail.references);
    const inReplyTo = idsOf(mail.inReplyTo);
    const root = references[0] ?? inReplyTo[0] ?? messageId;
    const chatId = emailChatId(address, root);
    if (chatId === null) return null;
    const subject = (mail.subject ?? '').trim();
    const known = { subject, references: [...(references.length > 0 ? references : inReplyTo), messageId] };
    this.remember(messageId, known);
    this.remember(chatId, { subject, references: [root] });
    const images = imagesOf(mail);
    const body = replyText(mail.text ?? '');
    const firstLine = body.split('\n', 1)[0] ?? '';
    const bareSubject = subject.replace(/^((re|fwd?|aw|wg)\s*:\s*)+/i, '').trim();
    // `/stop` and `/clear` count in the subject or as the first line.
    const command = parseCommand(firstLine) ?? parseCommand(bareSubject);
    const text = command ? `/${command}` : body !== '' ? body : bareSubject;
    return {
      messageId,
      chatId,
      chatType: 'direct',
      ...(bareSubject ? { chatName: bareSubject.slice(0, 120) } : {}),
      from: { id: address, ...(sender?.name ? { name: sender.name } : {}) },
      text,
      mentioned: true,
      ...(images.length > 0 ? { images } : {}),
    };
  }

  private remember(id: string, known: Known): void {
    if (this.known.size > 10_000) this.known.clear();
    this.known.set(id, known);
  }

  // ── outbound: SMTP ───────────────────────────────────────────────────────────

  /**
   * One mail to the conversation's sender, answering `replyTo` (In-Reply-To, and References
   * with the conversation's root) so mail clients thread it; a push of the digital human's own
   * answers the conversation's root. Plain text.
   */
  override async send(instance: ChannelInstanceRecord, target: OutboundTarget, text: string): Promise<void> {
    const address = emailAddressOf(target.chatId);
    if (!/^[^\s@]+@[^\s@]+$/.test(address))
      throw new ChannelError(`email: no address in chat "${target.chatId}"`, true);
    const c = instance.config;
    const host = String(c.smtpHost ?? '');
    const reached = await this.reach(host, 'SMTP');
    const tls = tlsMode(c.smtpTls, 'starttls');
    const user = c.smtpUser !== undefined ? String(c.smtpUser) : String(c.imapUser ?? '');
    const pass = c.smtpPassword !== undefined && c.smtpPassword !== '' ? c.smtpPassword : c.imapPassword;
    const { nodemailer } = await mailLibraries();
    const transport = nodemailer.createTransport({
      host: reached.address ?? host,
      port: port(c.smtpPort) ?? (tls === 'tls' ? 465 : tls === 'starttls' ? 587 : 25),
      secure: tls === 'tls',
      requireTLS: tls === 'starttls',
      ignoreTLS: tls === 'none',
      ...(reached.address !== null && reached.address !== host ? { tls: { servername: host } } : {}),
      ...(user !== '' ? { auth: { user, pass: String(pass ?? '') } } : {}),
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      socketTimeout: 60_000,
      logger: false,
    });
    // The mail answered (a push of the digital human's own answers the conversation's root).
    const conversation = this.known.get(target.chatId);
    const answered = target.replyTo ?? conversation?.references[0] ?? null;
    const known =
      (target.replyTo
        ? (this.known.get(target.replyTo) ?? (await this.lookUp(instance, target.replyTo)))
        : undefined) ?? conversation;
    const references = unique([...(known?.references ?? []), ...(answered ? [answered] : [])]);
    const subject = known?.subject ? reSubject(known.subject) : 'Re: your message';
    try {
      await transport.sendMail({
        from: { name: String(c.fromName ?? ''), address: String(c.fromAddress ?? '') },
        to: address,
        subject,
        text,
        ...(answered ? { inReplyTo: answered, references } : {}),
        // RFC 3834: an automatic answer (so vacation responders and other bots do not answer it).
        headers: { 'Auto-Submitted': 'auto-replied' },
      });
    } catch (err) {
      const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
      const said = serverWords(e.response) ?? e.message ?? String(err);
      // Credentials refused, or the recipient refused for good (5xx): not retried.
      const permanent = e.code === 'EAUTH' || (e.code === 'EENVELOPE' && (e.responseCode ?? 0) >= 500);
      throw new ChannelError(`SMTP ${e.code === 'EAUTH' ? 'login refused' : host}: ${said}`, permanent);
    } finally {
      transport.close();
    }
  }

  /**
   * Subject and References of a mail this replica did not read (another replica holds the
   * mailbox, or this one restarted): found in the mailbox by its Message-ID over a short IMAP
   * session; null when it cannot be (the reply then threads by In-Reply-To alone).
   */
  private async lookUp(instance: ChannelInstanceRecord, messageId: string): Promise<Known | null> {
    let client: ImapFlow | null = null;
    try {
      client = await this.open(instance);
      const uids = await client.search({ header: { 'message-id': messageId } }, { uid: true });
      const uid = Array.isArray(uids) ? uids.at(-1) : undefined;
      if (uid === undefined) return null;
      const found = await client.fetchOne(
        String(uid),
        { uid: true, headers: ['subject', 'references', 'in-reply-to'] },
        { uid: true },
      );
      if (!found || !found.headers) return null;
      const { simpleParser } = await mailLibraries();
      const mail = await simpleParser(found.headers);
      const references = idsOf(mail.references);
      const known = {
        subject: (mail.subject ?? '').trim(),
        references: [...(references.length > 0 ? references : idsOf(mail.inReplyTo)), messageId],
      };
      this.remember(messageId, known);
      return known;
    } catch {
      return null;
    } finally {
      await client?.logout().catch(() => client?.close());
    }
  }

  /** The channel address policy (SVC_CHANNEL_ALLOW) applied to a mail server's host. */
  private async reach(host: string, what: string): Promise<{ address: string | null }> {
    const checked = await this.policy.checkHost(host);
    if (typeof checked === 'string') throw new ChannelError(`${what}: ${checked}`, true);
    return checked;
  }
}

function port(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : null;
}

function tlsMode(v: unknown, fallback: Tls): Tls {
  return TLS_MODES.includes(v as Tls) ? (v as Tls) : fallback;
}

/** The server's own words of a tagged answer (`a1 NO [AUTHENTICATIONFAILED] Authentication failed.`). */
function serverWords(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.trim() === '') return null;
  return raw
    .trim()
    .replace(/^[A-Za-z0-9.]+\s+(NO|BAD)\s+/i, '')
    .slice(0, 300);
}

function normaliseId(id: string | undefined): string | null {
  if (!id) return null;
  const t = id.trim();
  if (t === '') return null;
  return t.startsWith('<') ? t : `<${t}>`;
}

function idsOf(v: string | string[] | undefined): string[] {
  const list = Array.isArray(v) ? v : typeof v === 'string' ? v.split(/\s+/) : [];
  return list.map((x) => normaliseId(x)).filter((x): x is string => x !== null);
}

function header(mail: ParsedMail, name: string): string | null {
  const v = mail.headers.get(name);
  return typeof v === 'string' ? v : null;
}

/**
 * A chat id: the sender's address and a short hash of the conversation's root Message-ID,
 * `alice@example.com:3f2a9c01d4e5`. It stands in a conversation id (letters, digits and
 * `. _ : @ -`, so other characters of the address are written `_xx`, their UTF-8 bytes in hex)
 * and must leave room for it (EMAIL_MAX_ADDRESS); a longer address is not answered (null).
 */
export function emailChatId(address: string, root: string): string | null {
  const encoded = Array.from(Buffer.from(address.toLowerCase(), 'utf8'))
    .map((byte) => {
      const ch = String.fromCharCode(byte);
      return /[a-z0-9.@-]/.test(ch) ? ch : `_${byte.toString(16).padStart(2, '0')}`;
    })
    .join('');
  if (encoded.length > EMAIL_MAX_ADDRESS) return null;
  return `${encoded}:${createHash('sha256').update(root).digest('hex').slice(0, 12)}`;
}

/** The address of a chat id (emailChatId). */
export function emailAddressOf(chatId: string): string {
  const encoded = chatId.slice(0, chatId.lastIndexOf(':') >= 0 ? chatId.lastIndexOf(':') : chatId.length);
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const hex = encoded[i] === '_' ? /^[0-9a-f]{2}$/.exec(encoded.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(encoded.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * What the sender wrote: the body without the quoted mail under it (`>` lines, "On … wrote:",
 * an "Original Message" divider) and without a signature after `-- `.
 */
export function replyText(text: string): string {
  const out: string[] = [];
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (/^-- ?$/.test(line)) break;
    if (/^-{2,}\s*Original Message\s*-{2,}/i.test(line)) break;
    if (/^On .+wrote:\s*$/.test(line)) break;
    if (/^\s*>/.test(line)) continue;
    out.push(line);
  }
  return out.join('\n').trim();
}

function imagesOf(mail: ParsedMail): Array<{ mediaType: string; data: string }> {
  return mail.attachments
    .filter((a) => a.contentType.startsWith('image/') && a.size > 0 && a.size <= MAX_IMAGE_BYTES)
    .slice(0, MAX_IMAGES)
    .map((a) => ({ mediaType: a.contentType, data: a.content.toString('base64') }));
}

function reSubject(subject: string): string {
  return /^re\s*:/i.test(subject) ? subject : `Re: ${subject}`;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
