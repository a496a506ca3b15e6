/**
 * GET /docs — the API reference, drawn in the browser by Swagger UI from the live /v1/openapi.json,
 * so it lists exactly the operations this service serves. Swagger UI's own files come from the
 * swagger-ui-dist package and are served from this host (no CDN); the page starts it with its own
 * script (/assets/docs.js), keeping the pages' policy of no inline script.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HTML_TYPE, pageShell } from '../pages/shell.js';

const SWAGGER_FILES = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
} as const;

/**
 * Swagger UI's own colours put some text under 4.5:1 (method badges, version stamps, the Authorize
 * button); these rules, loaded after its stylesheet, darken them to the pages' palette.
 */
const DOCS_CSS = `
.swagger-ui .opblock .opblock-summary-method{color:#fff;text-shadow:none}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#0b57d0}
.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#0a6b2d}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#a3141c}
.swagger-ui .opblock.opblock-patch .opblock-summary-method,.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#7a4b00}
.swagger-ui .info .title small,.swagger-ui .info .title small pre{background:#4a525d;color:#fff}
.swagger-ui .info .title small.version-stamp,.swagger-ui .info .title small.version-stamp pre{background:#0a6b2d;color:#fff}
.swagger-ui .info .url,.swagger-ui .info a{color:#0b57d0}
.swagger-ui .btn.authorize{color:#0a6b2d;border-color:#0a6b2d}
.swagger-ui .btn.authorize span{color:#0a6b2d}
.swagger-ui .btn.authorize svg{fill:#0a6b2d}
`;

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The package's file without its source-map comment (the map is not served). */
async function swaggerFile(name: keyof typeof SWAGGER_FILES): Promise<string> {
  const text = await readFile(path.join(swaggerDir, name), 'utf8');
  return text.replace(/\n?\/[*/]# sourceMappingURL=\S+(?: \*\/)?\s*$/, '\n');
}

export function registerDocsPage(app: FastifyInstance): void {
  const cache = new Map<string, Promise<string>>();
  app.get('/assets/docs.css', async (_request, reply) =>
    reply
      .header('content-type', 'text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(DOCS_CSS),
  );
  for (const [name, type] of Object.entries(SWAGGER_FILES)) {
    app.get(`/assets/${name}`, async (_request, reply) => {
      let text = cache.get(name);
      if (!text) {
        text = swaggerFile(name as keyof typeof SWAGGER_FILES);
        cache.set(name, text);
      }
      return reply
        .header('content-type', type)
        .header('cache-control', 'public, max-age=3600')
        .send(await text);
    });
  }
  app.get('/docs', async (_request, reply) => {
    const body = `<header><h1>API reference</h1>
<p class="lead">Every REST operation of this service, drawn from <a href="/v1/openapi.json">the live OpenAPI document</a>. Agents can also use MCP at <code>/mcp</code>; the <a href="/guide">guide</a> explains the concepts.</p></header>
<main id="main"><div id="swagger-ui"><p>Loading the reference… It needs JavaScript; without it, read <a href="/v1/openapi.json">the OpenAPI document</a> directly.</p></div></main>`;
    const html = pageShell({
      title: 'API reference',
      body,
      styles: ['/assets/swagger-ui.css', '/assets/docs.css'],
      classicScripts: ['/assets/swagger-ui-bundle.js'],
      scripts: ['/assets/docs.js'],
    });
    return reply.header('content-type', HTML_TYPE).header('cache-control', 'no-store').send(html);
  });
}
