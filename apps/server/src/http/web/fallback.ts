import type { Request, Response } from 'express';
import { renderSignInPage } from './sign-in-page.js';
import { WebApp } from './web-app.js';

let cachedPage: { basePath: string; html: string } | null = null;
let webApp: WebApp | null | undefined;

/**
 * Unknown paths: GET (and HEAD) answer the web app (its files, or its page with 200); other
 * methods a plain 404. Without a built app (`npm run build` not run), a plain sign-in page.
 */
export function sendUnknownPath(req: Request, res: Response, basePath: string): void {
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (webApp === undefined) webApp = WebApp.load();
    if (webApp) {
      webApp.send(req, res, req.path);
      return;
    }
    if (cachedPage?.basePath !== basePath) cachedPage = { basePath, html: renderSignInPage(basePath) };
    res.status(200).type('html').send(cachedPage.html);
    return;
  }
  res.status(404).type('text/plain').send('Not Found');
}
