/**
 * The API reference page's script (bundled for the browser, served as /assets/docs.js): starts
 * Swagger UI (loaded just before from /assets/swagger-ui-bundle.js) on the live OpenAPI document.
 */
interface SwaggerUiGlobal {
  SwaggerUIBundle?: (options: Record<string, unknown>) => unknown;
}

const start = (globalThis as SwaggerUiGlobal).SwaggerUIBundle;
if (start) {
  start({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: false,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    // Requests typed into "Try it out" go to this origin only (the page's connect-src).
    tryItOutEnabled: false,
    // Swagger UI leaves its server picker unnamed; name it for screen readers.
    onComplete: () => document.getElementById('servers')?.setAttribute('aria-label', 'Server'),
  });
}
