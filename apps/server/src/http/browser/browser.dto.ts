import { IsOptional } from 'class-validator';
import { ArrayBodyAsEmpty, Check, QueryDto } from '../common/validation.js';

/** Request bodies and queries of the AI browser's routes (docs/api/ai-browser-views.md). */

const isString = (value: unknown): boolean => typeof value === 'string';
const nonEmptyString = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

/** An absolute http(s) URL: a sign-in page is a web page, never `file:` or `chrome:`. */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

@QueryDto()
export class LivePagesQuery {
  @IsOptional()
  @Check(isString, 'spaceId must be a string', { type: 'string', description: 'Only pages of this space' })
  spaceId?: string;

  @IsOptional()
  @Check(isString, 'conversationId must be a string', {
    type: 'string',
    description: 'Only pages of this conversation',
  })
  conversationId?: string;
}

@ArrayBodyAsEmpty()
export class StopPageDto {
  @IsOptional()
  @Check((v) => v === null || isString(v), 'conversationId must be a string', {
    type: 'string',
    description: 'The conversation asking; the page stops only if that conversation opened it',
  })
  conversationId?: string | null;
}

@ArrayBodyAsEmpty()
export class LoginSessionDto {
  @Check(nonEmptyString, 'spaceId is required', { type: 'string', description: 'The space whose profile signs in' })
  spaceId: string;

  @Check(isHttpUrl, 'url must be an http(s) URL', { type: 'string', format: 'uri', description: 'The sign-in page' })
  url: string;
}
