import type { Request, Response } from 'express';
import { renderSignInPage } from './sign-in-page.js';

let cachedPage: { basePath: string; html: string } | null = null;

/** Unknown paths: GET (and HEAD) answer the web app page with 200; other methods a plain 404. */
export function sendUnknownPath(req: Request, res: Response, basePath: string): void {
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (cachedPage?.basePath !== basePath) cachedPage = { basePath, html: renderSignInPage(basePath) };
    res.status(200).type('html').send(cachedPage.html);
    return;
  }
  res.status(404).type('text/plain').send('Not Found');
}
