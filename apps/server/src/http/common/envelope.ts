import type { Response } from 'express';
import type { FailureBody, SuccessBody } from '#contracts/errors.js';

export function sendFailure(res: Response, status: number, error: string, code?: string): void {
  const body: FailureBody = code ? { success: false, error, code } : { success: false, error };
  res.status(status).json(body);
}

/** The success envelope around `data` (docs/api.md, "Answers and errors"). */
export const ok = <T>(data: T): SuccessBody<T> => ({ success: true, data });
