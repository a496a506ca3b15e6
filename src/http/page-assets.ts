/**
 * GET /assets/{name}.js — the pages' browser scripts, served from this host (no CDN). A built
 * service serves what `npm run build` bundled into dist/public/; run from the TypeScript sources it
 * bundles them itself once (src/pages/bundle.ts). GET /assets/page.css — the pages' stylesheet.
 */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { PAGE_SCRIPTS, type PageScript } from '../pages/bundle.js';
import { PAGE_CSS } from '../pages/styles.js';
import { ProtocolError } from '../errors.js';

const fromSources = import.meta.url.endsWith('.ts');

async function loadScripts(): Promise<Record<PageScript, string>> {
  if (fromSources) {
    const { bundlePages } = await import('../pages/bundle.js');
    return bundlePages();
  }
  const out = {} as Record<PageScript, string>;
  for (const name of PAGE_SCRIPTS) {
    out[name] = await readFile(new URL(`../../public/${name}.js`, import.meta.url), 'utf8');
  }
  return out;
}

export function registerPageAssets(app: FastifyInstance): void {
  let scripts: Promise<Record<PageScript, string>> | undefined;
  app.get('/assets/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    const cache = fromSources ? 'no-store' : 'public, max-age=300';
    if (file === 'page.css') {
      return reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', cache).send(PAGE_CSS);
    }
    const name = file.endsWith('.js') ? file.slice(0, -3) : '';
    if (!(PAGE_SCRIPTS as readonly string[]).includes(name)) {
      throw new ProtocolError({
        code: 'vendor:conclave:not_found',
        message: `There is no asset ${file}. The pages load /assets/page.css and ${PAGE_SCRIPTS.map((s) => `/assets/${s}.js`).join(', ')}.`,
        details: { path: `/assets/${file}` },
      });
    }
    scripts ??= loadScripts();
    const code = (await scripts)[name as PageScript];
    return reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', cache).send(code);
  });
}
