import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ASSISTANT_RELAY_HEADER, isRelayed } from './assistant-listener.js';

/** What the relay marker sets on a request: whether the assistant's own listener passed it on. */
interface MarkedRequest {
  headers: Record<string, string | string[] | undefined>;
  assistantRelayed?: boolean;
}

/**
 * Marks each request with whether it carries the assistant listener's token (`token()` is
 * null until the listener is up). Operations that the assistant may call but not with every
 * argument (a space folder of its choosing, say) read the mark with `@Relayed()`.
 */
export function markRelayed(token: () => string | null): (req: MarkedRequest, res: unknown, next: () => void) => void {
  return (req, _res, next) => {
    req.assistantRelayed = isRelayed(req.headers[ASSISTANT_RELAY_HEADER], token());
    next();
  };
}

/** Whether the request came through the assistant's own listener (a turn's ServiceApi call). */
export const Relayed = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): boolean =>
    ctx.switchToHttp().getRequest<MarkedRequest>().assistantRelayed === true,
);
