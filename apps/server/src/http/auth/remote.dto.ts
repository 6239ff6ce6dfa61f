import { ArrayBodyAsEmpty, Documented } from '../common/validation.js';

/**
 * Sign-in body (docs/api.md, "Authentication"). Any token value is judged by the lockout rules (a
 * wrong or missing one is a failed attempt, 401), so it is not refused here.
 */
@ArrayBodyAsEmpty()
export class LoginDto {
  @Documented({ type: 'string', description: 'The access password' }, { required: true })
  token?: unknown;
}
