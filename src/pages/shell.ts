/**
 * The frame every person-facing page shares (home, API reference, guide, errors, rooms): one
 * stylesheet, scripts only from /assets (the pages' policy runs no inline script or style,
 * src/http/page-security.ts), a skip link and the same navigation, so a person who lands on any page
 * can reach the others.
 */
import { escapeHtml } from './room-render.js';

export interface Shell {
  title: string;
  body: string;
  /** Browser scripts under /assets, loaded as modules after the body. */
  scripts?: readonly string[];
  /** Classic (non-module) scripts, loaded before the module scripts. */
  classicScripts?: readonly string[];
  /** Extra stylesheets under /assets. */
  styles?: readonly string[];
  /** Machine-readable state: one application/svc+json script element (already script-safe JSON). */
  embed?: { id: string; json: string };
}

export const NAV_LINKS: readonly { href: string; label: string }[] = [
  { href: '/', label: 'Home' },
  { href: '/docs', label: 'API reference' },
  { href: '/guide', label: 'Guide' },
  { href: '/visualizer', label: 'Visualizer' },
  { href: '/.well-known/svc.json', label: 'Discovery' },
];

export function pageShell(shell: Shell): string {
  const styles = ['/assets/page.css', ...(shell.styles ?? [])]
    .map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`)
    .join('');
  const classic = (shell.classicScripts ?? []).map((src) => `<script src="${escapeHtml(src)}"></script>`).join('\n');
  const modules = (shell.scripts ?? [])
    .map((src) => `<script type="module" src="${escapeHtml(src)}"></script>`)
    .join('\n');
  const nav = NAV_LINKS.map((l) => `<a href="${l.href}">${escapeHtml(l.label)}</a>`).join(' ');
  const embed = shell.embed
    ? `<script type="application/svc+json" id="${escapeHtml(shell.embed.id)}">${shell.embed.json}</script>\n`
    : '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.ico" type="image/svg+xml"><title>${escapeHtml(shell.title)}</title>
${styles}</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<nav class="site" aria-label="Site">${nav}</nav>
${shell.body}
${embed}${classic}
${modules}
</body>
</html>
`;
}

/** HTML response headers for a page; the page policy itself is added by installPageSecurity. */
export const HTML_TYPE = 'text/html; charset=utf-8';
