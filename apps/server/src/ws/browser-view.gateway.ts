import type { IncomingMessage } from 'node:http';
import { Inject, Logger } from '@nestjs/common';
import { type OnGatewayConnection, type OnGatewayDisconnect, WebSocketGateway } from '@nestjs/websockets';
import type { BrowserFrame } from '#contracts/browser.js';
import { ErrorTexts } from '#contracts/errors.js';
import { AccessService } from '#core/auth/access.service.js';
import type { PageWatch } from '#core/browser/ai-browser.js';
import { BrowserViewsService, BrowserViewTexts } from '#core/browser/browser-views.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { clientIp } from '../http/common/client-ip.js';
import { BROWSER_VIEW_PATH, parseViewerInput, viewIdOf } from './browser-view-frames.js';
import { capBeforeSignIn, liftSignInCap, UNAUTHENTICATED_MAX_FRAME_BYTES } from './frame-limits.js';

interface Socket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  pause(): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
}

interface Viewer {
  viewId: string | null;
  ip: string;
  authenticated: boolean;
  watch: PageWatch | null;
  closed: boolean;
  chain: Promise<void>;
  signInTimer: NodeJS.Timeout | null;
}

const OPEN = 1;
/** A viewer frame is small: input events, never files. */
const MAX_VIEWER_FRAME_BYTES = 64 * 1024;
/** A viewer that stopped reading gets no new frames until it drains (frames are acknowledged anyway). */
const MAX_VIEWER_BUFFER_BYTES = 8 * 1024 * 1024;
/** Close codes: the page is not (or no longer) there; sign-in failed (as on /ws); the page ended. */
export const CLOSE_PAGE_NOT_FOUND = 4004;
export const CLOSE_AUTH_FAILED = 4001;
export const CLOSE_PAGE_ENDED = 4000;
/** The page is there but its live view could not start (the client may connect again). */
export const CLOSE_VIEW_FAILED = 1011;
const SIGN_IN_TIMEOUT_CLOSE = 1008;
const AUTH_FAILED_CLOSE_MS = 100;

const error = (text: string): string => JSON.stringify({ type: 'error', error: text });

/**
 * The live view of one AI browser page, `/ws/browser/:viewId` (docs/api/ai-browser.md,
 * "Live view"): the usual sign-in frame first (the same AccessService and lockout rules as `/ws`),
 * then screencast frames out and the viewer's input in. The page may live on another replica:
 * BrowserViewsService relays it. An unknown page closes the socket with 4004 and a reason.
 */
@WebSocketGateway({ path: BROWSER_VIEW_PATH, maxPayload: MAX_VIEWER_FRAME_BYTES })
export class BrowserViewGateway implements OnGatewayConnection, OnGatewayDisconnect {
  private readonly logger = new Logger('BrowserViewGateway');
  private readonly viewers = new Map<Socket, Viewer>();

  constructor(
    private readonly access: AccessService,
    private readonly views: BrowserViewsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  handleConnection(socket: Socket, req: IncomingMessage): void {
    const viewer: Viewer = {
      viewId: viewIdOf(req.url),
      ip: clientIp(req, this.config),
      authenticated: false,
      watch: null,
      closed: false,
      chain: Promise.resolve(),
      signInTimer: null,
    };
    this.viewers.set(socket, viewer);
    capBeforeSignIn(socket, req.socket, UNAUTHENTICATED_MAX_FRAME_BYTES);
    viewer.signInTimer = setTimeout(
      () => socket.close(SIGN_IN_TIMEOUT_CLOSE, 'Sign in first'),
      this.config.wsSignInTimeoutMs,
    );
    viewer.signInTimer.unref();
    socket.on('message', (data, isBinary) => {
      viewer.chain = viewer.chain
        .then(() => this.onMessage(socket, viewer, isBinary ? null : data.toString('utf8')))
        .catch((err: Error) => {
          this.logger.warn(`browser view frame failed: ${err.message}`);
          this.send(socket, error(err.message));
        });
    });
  }

  handleDisconnect(socket: Socket): void {
    const viewer = this.viewers.get(socket);
    this.viewers.delete(socket);
    if (!viewer) return;
    viewer.closed = true;
    if (viewer.signInTimer) clearTimeout(viewer.signInTimer);
    // After the chain: a watch still being set up is closed once it exists.
    void viewer.chain.then(() => viewer.watch?.close()).catch(() => undefined);
  }

  private async onMessage(socket: Socket, viewer: Viewer, text: string | null): Promise<void> {
    let frame: unknown;
    try {
      frame = text === null ? null : JSON.parse(text);
    } catch {
      frame = null;
    }
    if (
      !frame ||
      typeof frame !== 'object' ||
      Array.isArray(frame) ||
      typeof (frame as { type?: unknown }).type !== 'string'
    ) {
      return this.send(socket, error('Invalid frame: a JSON object with a type is expected'));
    }
    const body = frame as Record<string, unknown>;
    if (body.type === 'auth') return this.authenticate(socket, viewer, body);
    if (!viewer.authenticated) return this.send(socket, error(ErrorTexts.notAuthenticated));
    const input = parseViewerInput(body);
    if (typeof input === 'string') return this.send(socket, error(input));
    if (!viewer.watch) return;
    await viewer.watch.input(input);
  }

  private async authenticate(socket: Socket, viewer: Viewer, frame: Record<string, unknown>): Promise<void> {
    if (viewer.authenticated) return this.send(socket, '{"type":"auth:success"}');
    // `{type:"auth", token}`, or `/ws`'s `{type:"auth", payload:{token}}`.
    const payload =
      frame.payload && typeof frame.payload === 'object' ? (frame.payload as Record<string, unknown>) : {};
    const outcome = await this.access.signIn(frame.token ?? payload.token, viewer.ip);
    if (!outcome.ok) {
      const text = outcome.reason === 'locked' ? ErrorTexts.locked : ErrorTexts.invalidToken;
      this.send(socket, JSON.stringify({ type: 'auth:failed', error: text }));
      setTimeout(() => socket.close(CLOSE_AUTH_FAILED, 'Authentication failed'), AUTH_FAILED_CLOSE_MS).unref();
      return;
    }
    viewer.authenticated = true;
    if (viewer.signInTimer) clearTimeout(viewer.signInTimer);
    viewer.signInTimer = null;
    liftSignInCap(socket);
    this.send(socket, '{"type":"auth:success"}');
    let watch: PageWatch | null;
    try {
      watch = viewer.viewId ? await this.watch(socket, viewer, viewer.viewId) : null;
    } catch (err) {
      // Half a view (signed in, no frames ever) would look like a still page: the client is told
      // and may connect again.
      this.logger.warn(`the live view of ${viewer.viewId} could not start: ${(err as Error).message}`);
      socket.close(CLOSE_VIEW_FAILED, BrowserViewTexts.viewFailed);
      return;
    }
    if (!watch) {
      socket.close(CLOSE_PAGE_NOT_FOUND, BrowserViewTexts.pageNotFound);
      return;
    }
    if (viewer.closed) {
      await watch.close();
      return;
    }
    viewer.watch = watch;
  }

  private watch(socket: Socket, viewer: Viewer, viewId: string): Promise<PageWatch | null> {
    return this.views.watch(viewId, {
      frame: (frame: BrowserFrame) => {
        if (socket.bufferedAmount > MAX_VIEWER_BUFFER_BYTES) return;
        this.send(socket, JSON.stringify(frame));
      },
      ended: (reason: string) => {
        viewer.watch = null;
        socket.close(CLOSE_PAGE_ENDED, reason.slice(0, 120));
      },
    });
  }

  private send(socket: Socket, data: string): void {
    if (socket.readyState === OPEN) socket.send(data);
  }
}
