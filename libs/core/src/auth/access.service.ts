import { randomUUID } from 'node:crypto';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { ErrorCodes, ErrorTexts } from '#contracts/errors.js';
import { DomainError } from '../errors/domain-error.js';
import { Clock } from '../ports/clock.port.js';
import { type CountedKey, LockoutStore } from '../ports/lockout-store.port.js';
import { Metrics, NoopMetrics } from '../ports/metrics.port.js';
import { GLOBAL_KEY, GLOBAL_RULE, ipKey, PER_IP_RULE, retryAfterSeconds } from './lockout-policy.js';
import { SecretMatcher } from './secret-matcher.js';

/** The access password the server holds (resolved from the environment or the data folder). */
export class AccessPassword {
  constructor(readonly value: string) {}
}

export type SignInOutcome =
  { ok: true } | { ok: false; reason: 'invalid' } | { ok: false; reason: 'locked'; retryAfterSeconds: number };

/**
 * Checks access tokens. Header and query tokens are checked without throttling; sign-in
 * attempts (login endpoint, WebSocket auth frame) go through the lockout rules.
 */
@Injectable()
export class AccessService {
  private readonly password: SecretMatcher;
  private readonly logger = new Logger('Access');
  /** Lock end times already announced, per address (bounded), so each lockout is logged once here. */
  private readonly announced = new Map<string, number>();

  constructor(
    password: AccessPassword,
    private readonly lockouts: LockoutStore,
    private readonly clock: Clock,
    @Optional() private readonly metrics: Metrics = new NoopMetrics(),
  ) {
    this.password = new SecretMatcher(password.value);
  }

  /** Constant-time comparison, hiding the password's length too (SecretMatcher). */
  isValidToken(candidate: string): boolean {
    return this.password.matches(candidate);
  }

  /**
   * A sign-in attempt under the lockout rules. The attempt is admitted (lock checked and the
   * attempt counted, in one atomic step) before the password is compared, then settled.
   */
  async signIn(token: unknown, ip: string): Promise<SignInOutcome> {
    const keys: CountedKey[] = [
      { key: ipKey(ip), rule: PER_IP_RULE },
      { key: GLOBAL_KEY, rule: GLOBAL_RULE },
    ];
    const attempt = randomUUID();
    const now = this.clock.now();
    const refusal = await this.lockouts.admit(keys, attempt, now);
    if (refusal !== null) {
      const retryAfter = retryAfterSeconds(refusal.until, now);
      const scope = refusal.key === GLOBAL_KEY ? 'global' : 'ip';
      this.metrics.signInFailed('locked');
      if (this.announced.get(ip) !== refusal.until) {
        if (this.announced.size > 1000) this.announced.clear();
        this.announced.set(ip, refusal.until);
        this.metrics.lockout(scope);
        this.logger.warn('sign-in lockout in force', { ip, scope, retryAfterSeconds: retryAfter });
      }
      this.logger.log('sign-in refused: locked out', { ip, retryAfterSeconds: retryAfter });
      return { ok: false, reason: 'locked', retryAfterSeconds: retryAfter };
    }
    const succeeded = typeof token === 'string' && this.isValidToken(token);
    await this.lockouts.settle(keys, attempt, now, { succeeded, clearOnSuccess: ipKey(ip) });
    if (!succeeded) {
      this.metrics.signInFailed('invalid');
      this.logger.log('sign-in failed: wrong password', { ip });
    }
    return succeeded ? { ok: true } : { ok: false, reason: 'invalid' };
  }

  /** `signIn` for the HTTP login operation: failures become domain errors. */
  async login(token: unknown, ip: string): Promise<void> {
    const outcome = await this.signIn(token, ip);
    if (outcome.ok) return;
    if (outcome.reason === 'locked') {
      throw new DomainError('locked', ErrorTexts.locked, ErrorCodes.LOCKED, {
        retryAfterSeconds: outcome.retryAfterSeconds,
      });
    }
    throw DomainError.unauthorized(ErrorTexts.invalidToken);
  }
}
