import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from './test-server.js';
import { WsTestClient } from './ws-client.js';

/**
 * A site with a cookie session on 127.0.0.1, for sign-in tests: `/` is a form whose text box
 * fills the top of the page (so a click there focuses it at any viewport), Enter submits it,
 * and the answer to the submission sets `session=<user>`. The welcome page it answers with loads
 * `/welcomed`, which notes the session cookie it comes with: once a name is in `welcomed` the
 * browser holds the cookie (what a person sees before finishing a sign-in).
 */
export class LoginSite {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    /** The user names submitted, in order. */
    readonly submitted: string[],
    /** The sessions (user names) the welcome page's request came back with, in order. */
    readonly welcomed: string[],
  ) {}

  static async start(): Promise<LoginSite> {
    const submitted: string[] = [];
    const welcomed: string[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/welcomed') {
        const session = /(?:^|;\s*)session=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
        if (session !== undefined) welcomed.push(decodeURIComponent(session));
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'POST' && req.url === '/login') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          const user = new URLSearchParams(body).get('user') ?? '';
          submitted.push(user);
          res.writeHead(200, {
            'Content-Type': 'text/html; charset=utf-8',
            'Set-Cookie': `session=${encodeURIComponent(user)}; Path=/; Max-Age=3600; HttpOnly`,
          });
          res.end(
            `<!doctype html><title>Welcome</title><h1>Welcome ${user.replace(/[<&]/g, '')}</h1>` +
              '<img src="/welcomed" alt="">',
          );
        });
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><title>Sign in</title><style>body{margin:0}' +
          'input{position:absolute;left:0;top:0;width:100vw;height:45vh;font-size:40px}' +
          'button{position:absolute;left:0;top:55vh;width:100vw;height:45vh}</style>' +
          '<form method="post" action="/login"><input name="user" autocomplete="off"><button>Sign in</button></form>',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new LoginSite(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, submitted, welcomed);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A digital human whose `browser_login` names `siteUrl` (labelled "Loopback site"). */
export function signInSpec(siteUrl: string, name = 'Site Helper'): string {
  return `spec_version: "1"
name: ${name}
version: "1.0.0"
author: t
description: d
type: automation
system_prompt: Help.
browser_login:
  - url: ${siteUrl}
    label: Loopback site
`;
}

/** The live view of `viewId` on `server` (`/ws/browser/:viewId`), signed in with the auth frame. */
export async function openLiveView(server: TestServer, viewId: string): Promise<WsTestClient> {
  const client = await WsTestClient.connect(`${server.wsUrl}/browser/${viewId}`);
  client.send({ type: 'auth', token: server.password });
  await client.next((f) => f.type === 'auth:success');
  return client;
}
