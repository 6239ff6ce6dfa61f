import { DomainError } from './domain-error.js';

/**
 * The one check of a required text field read from a request: a string that is not blank,
 * or 400 naming the field (`<field> <reason>`). Returns the value as given (not trimmed).
 */
export function requiredString(value: unknown, field: string, reason = 'is required and must be a string'): string {
  if (typeof value !== 'string' || value.trim() === '') throw DomainError.invalid(`${field} ${reason}`);
  return value;
}
