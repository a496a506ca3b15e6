/** The OAuth routes' OpenAPI descriptions are valid OpenAPI 3.1 and cover every mounted OAuth route. */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../../src/http/openapi.js';
import { oauthOpenApiPaths } from '../../../src/http/oauth-openapi.js';
import { OAUTH_ROUTES } from '../../../src/http/oauth-routes.js';
import { OPERATIONS } from '../../../src/operations/table.js';

describe('OAuth OpenAPI fragment', () => {
  it('describes exactly the mounted OAuth routes', () => {
    const described = Object.entries(oauthOpenApiPaths(() => ({}))).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(OAUTH_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('is valid OpenAPI 3.1 inside the whole document', async () => {
    const document = buildOpenApi(OPERATIONS, 'http://127.0.0.1:3000', '0.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });
});
