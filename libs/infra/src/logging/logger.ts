import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import type { LogLevel } from '#core/config/app-config.js';
import { currentLogContext } from './log-context.js';

/**
 * Structured JSON logs (one line per event) through pino. Anything that could carry a
 * secret is redacted by path; callers never log tokens or passwords on purpose either.
 */
export const REDACT_PATHS = [
  'password',
  'token',
  'apiKey',
  'authorization',
  'secret',
  'SVC_REMOTE_PASSWORD',
  'SVC_AI_API_KEY',
  '*.secret',
  '*.password',
  '*.token',
  '*.apiKey',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
];

const NEST_BOOT_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'WebSocketsController',
  'NestApplication',
]);

/** Values that must never be written, whatever field or message carries them. */
const secrets = new Set<string>();

/** Adds a value (the access password, a configured API key) that every log line is scrubbed of. */
export function registerSecret(value: string | null | undefined): void {
  if (value && value.length >= 6) secrets.add(value);
}

function scrub(line: string): string {
  for (const secret of secrets) if (line.includes(secret)) line = line.split(secret).join('***');
  return line;
}

export function createPino(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '***' },
      formatters: { level: (label) => ({ level: label }) },
      // Request, job and turn ids of the work this line belongs to.
      mixin: () => currentLogContext() ?? {},
      // Last line of defence behind the redaction paths: known secret values, anywhere in a line.
      hooks: { streamWrite: scrub },
    },
    destination as never,
  );
}

/** Nest's logger interface over pino; also the logger core and infra code receive. */
export class AppLogger implements LoggerService {
  constructor(readonly pino: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    // Nest's boot chatter (modules loaded, routes mapped) is debug: quiet by default.
    const context = rest[rest.length - 1];
    this.write(typeof context === 'string' && NEST_BOOT_CONTEXTS.has(context) ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  info(message: string, fields: Record<string, unknown> = {}): void {
    this.pino.info(fields, message);
  }

  child(bindings: Record<string, unknown>): AppLogger {
    return new AppLogger(this.pino.child(bindings));
  }

  /** Nest passes (message, context) or (message, stack, context); objects become fields. */
  private write(level: 'info' | 'error' | 'warn' | 'debug' | 'trace', message: unknown, rest: unknown[]): void {
    const fields: Record<string, unknown> = {};
    for (const extra of rest) {
      if (extra && typeof extra === 'object') Object.assign(fields, extra);
      else if (typeof extra === 'string') {
        if (extra.includes('\n    at ')) fields.stack = extra;
        else fields.context = extra;
      }
    }
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'string') {
      this.pino[level](fields, message);
    } else {
      this.pino[level]({ ...fields, value: message }, 'log');
    }
  }
}
