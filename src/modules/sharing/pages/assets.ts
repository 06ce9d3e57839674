/**
 * The static files the pages link to: one stylesheet and the edit form's script. Served from
 * same-origin routes because the pages run under a strict CSP (`style-src 'self'`,
 * `script-src 'self'`, no inline code). Each path carries a hash of the content, so the route
 * can send `Cache-Control: public, max-age=31536000, immutable` and a deploy still takes effect.
 */
import { createHash } from 'node:crypto';
import { EDIT_FORM_SCRIPT } from './edit-script.js';
import { PAGE_STYLES } from './styles.js';

export interface StaticAsset {
  /** Root-relative URL path, e.g. `/assets/pages.3f2a9c1b7d.css`. */
  path: string;
  contentType: string;
  body: string;
}

function asset(name: string, ext: string, contentType: string, body: string): StaticAsset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
  return { path: `/assets/${name}.${hash}.${ext}`, contentType, body };
}

export const PAGE_ASSETS = {
  stylesheet: asset('pages', 'css', 'text/css; charset=utf-8', PAGE_STYLES),
  editScript: asset('invoice-edit', 'js', 'text/javascript; charset=utf-8', EDIT_FORM_SCRIPT),
} as const;

/** Every asset, for registering the static routes in one loop. */
export const STATIC_ASSETS: readonly StaticAsset[] = Object.values(PAGE_ASSETS);
