import { ErrorCodes } from '#contracts/errors.js';
import { DomainError } from '../../errors/domain-error.js';

/**
 * Field readers for the spec validator. Each takes the raw value and the field's path
 * (`subscriptions[1].source.type`) and either returns the typed value or throws a 422
 * VALIDATION_FAILED whose message starts with that path.
 */

export function specError(field: string, problem: string): DomainError {
  return new DomainError('unprocessable', `${field} ${problem}`, ErrorCodes.VALIDATION_FAILED);
}

export type Raw = Record<string, unknown>;

export const isMap = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function map(value: unknown, field: string): Raw {
  if (!isMap(value)) throw specError(field, 'must be an object');
  return value;
}

export function list(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw specError(field, 'must be a list');
  return value;
}

export function text(value: unknown, field: string): string {
  if (typeof value !== 'string') throw specError(field, 'must be a string');
  return value;
}

export function nonEmpty(value: unknown, field: string): string {
  if (value === undefined || value === null) throw specError(field, 'is required');
  const s = text(value, field);
  if (s.trim() === '') throw specError(field, 'must not be empty');
  return s;
}

/** Version-like strings: YAML reads `version: 2` as a number, which is accepted as its text. */
export function versionText(value: unknown, field: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return nonEmpty(value, field);
}

export function bool(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw specError(field, 'must be true or false');
  return value;
}

export function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (value === undefined || value === null) throw specError(field, 'is required');
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw specError(field, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function stringList(value: unknown, field: string): string[] {
  return list(value, field).map((item, i) => nonEmpty(item, `${field}[${i}]`));
}

export function url(value: unknown, field: string): string {
  const s = nonEmpty(value, field).trim();
  let parsed: URL;
  try {
    parsed = new URL(s);
  } catch {
    throw specError(field, 'must be a URL');
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) throw specError(field, 'must be an http:// or https:// URL');
  return s;
}

/** Sets `target[key]` to `read(raw[key])` when the field is present (null counts as absent). */
export function optional<T>(
  target: Raw,
  raw: Raw,
  key: string,
  field: string,
  read: (value: unknown, field: string) => T,
): void {
  const value = raw[key];
  if (value === undefined || value === null) return;
  target[key] = read(value, field);
}

export const at = (parent: string, key: string): string => (parent ? `${parent}.${key}` : key);
