import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './test-env.js';
import { waitFor } from './wait.js';

/** Whether Debian's dovecot (dovecot-imapd, installed by .ci/run) is here. */
export function dovecotInstalled(): boolean {
  try {
    execFileSync('dovecot', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A real IMAP server on loopback: Debian's dovecot, run in the foreground (`dovecot -F`) as a
 * child with its own configuration in a temporary directory, a passwd-file of plain passwords
 * and maildirs there. Mail is delivered by IMAP APPEND (how delivery appears to an IMAP client).
 * Clients reach it through a counting TCP relay (`connections`: how many are open now).
 */
export class DovecotServer {
  private relay!: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** The relay's port (what the server under test is given). */
  port = 0;
  readonly host = '127.0.0.1';
  /** Every connection ever opened through the relay. */
  opened = 0;

  private constructor(
    private readonly dir: string,
    private readonly child: ChildProcess,
    private readonly imapPort: number,
    readonly users: Record<string, string>,
  ) {}

  static async start(users: Record<string, string>): Promise<DovecotServer> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-dovecot-'));
    chmodSync(dir, 0o755);
    for (const sub of ['run', 'state', 'mail']) mkdirSync(join(dir, sub));
    const imapPort = await freePort();
    const root = process.getuid?.() === 0;
    // Dovecot refuses to run its login processes as root, and a mail user of uid 0: as root the
    // Debian package's own users are used; as anyone else, everything runs as that user.
    const me = root ? null : execFileSync('id', ['-un']).toString().trim();
    const group = root ? null : execFileSync('id', ['-gn']).toString().trim();
    if (root) chownSync(join(dir, 'mail'), uidOf('dovecot'), gidOf('dovecot'));
    writeFileSync(
      join(dir, 'passwd'),
      Object.entries(users)
        .map(([u, p]) => `${u}:{PLAIN}${p}`)
        .join('\n') + '\n',
    );
    writeFileSync(
      join(dir, 'dovecot.conf'),
      `base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = svc-test-${imapPort}
log_path = /dev/stderr
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
mail_location = maildir:${dir}/mail/%u
default_internal_user = ${root ? 'dovecot' : me}
default_internal_group = ${root ? 'dovecot' : group}
default_login_user = ${root ? 'dovenull' : me}
first_valid_uid = 0
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${root ? 'dovecot' : me} gid=${root ? 'dovecot' : group} home=${dir}/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${imapPort}
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
}
service submission-login {
  inet_listener submission {
    port = 0
  }
}
`,
    );
    const child = spawn('dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const server = new DovecotServer(dir, child, imapPort, users);
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          if (child.exitCode !== null) throw new Error(`dovecot exited: ${log}`);
          const s = net.connect(imapPort, '127.0.0.1');
          s.once('data', (d) => {
            s.destroy();
            resolve(d.toString().startsWith('* OK'));
          });
          s.once('error', () => resolve(false));
        }),
      15_000,
      'dovecot up',
    );
    await server.startRelay();
    return server;
  }

  private async startRelay(): Promise<void> {
    this.relay = net.createServer((client) => {
      this.opened += 1;
      this.sockets.add(client);
      const upstream = net.connect(this.imapPort, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      const end = () => {
        this.sockets.delete(client);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.relay.listen(0, '127.0.0.1', resolve));
    this.port = (this.relay.address() as AddressInfo).port;
  }

  /** IMAP connections open now (through the relay). */
  get connections(): number {
    return this.sockets.size;
  }

  /** Drops every open connection (a network failure, a server restart). */
  dropAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** Delivers a mail (RFC 5322 text) into the user's mailbox by IMAP APPEND. */
  async deliver(user: string, rfc822: string, mailbox = 'INBOX'): Promise<void> {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: this.imapPort,
      secure: false,
      doSTARTTLS: false,
      auth: { user, pass: this.users[user]! },
      logger: false,
    } as ConstructorParameters<typeof ImapFlow>[0]);
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.append(mailbox, rfc822.replace(/\r?\n/g, '\r\n'));
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.relay?.close(() => resolve()));
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user]).toString().trim());
}
function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user]).toString().trim());
}

export interface CapturedMail {
  from: string;
  to: string[];
  user: string | null;
  parsed: ParsedMail;
}

/**
 * A capturing SMTP peer on loopback (smtp-server, by nodemailer's author): real SMTP with AUTH
 * PLAIN/LOGIN against `users`, every accepted mail parsed into `mails`. `failNext` refuses the
 * next sends with a 451 (a mail server down for a moment).
 */
export class CapturingSmtpServer {
  readonly mails: CapturedMail[] = [];
  readonly host = '127.0.0.1';
  port = 0;
  failNext = 0;
  private server!: SMTPServer;

  private constructor(readonly users: Record<string, string>) {}

  static async start(users: Record<string, string>): Promise<CapturingSmtpServer> {
    const peer = new CapturingSmtpServer(users);
    peer.server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      authOptional: false,
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username && users[auth.username] === auth.password) return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (peer.failNext > 0) {
            peer.failNext -= 1;
            const err = new Error('Try again later') as Error & { responseCode: number };
            err.responseCode = 451;
            return callback(err);
          }
          void simpleParser(Buffer.concat(chunks)).then((parsed) => {
            peer.mails.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              user: typeof session.user === 'string' ? session.user : null,
              parsed,
            });
            callback();
          }, callback);
        });
      },
    });
    await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
    peer.port = (peer.server.server.address() as AddressInfo).port;
    return peer;
  }

  to(address: string): CapturedMail[] {
    return this.mails.filter((m) => m.to.includes(address));
  }

  async until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    await waitFor(async () => check(), timeoutMs, what);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
