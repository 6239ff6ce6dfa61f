import type { Response } from 'express';
import type { FailureBody } from '#contracts/errors.js';

export function sendFailure(res: Response, status: number, error: string, code?: string): void {
  const body: FailureBody = code ? { success: false, error, code } : { success: false, error };
  res.status(status).json(body);
}
