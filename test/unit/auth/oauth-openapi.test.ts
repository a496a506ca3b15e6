/** The OAuth routes' OpenAPI descriptions are valid OpenAPI 3.1 and cover every mounted OAuth route. */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { OAUTH_OPENAPI_PATHS, OAUTH_OPENAPI_SCHEMAS } from '../../../src/http/oauth-openapi.js';
import { OAUTH_ROUTES } from '../../../src/http/oauth-routes.js';

describe('OAuth OpenAPI fragment', () => {
  it('describes exactly the mounted OAuth routes', () => {
    const described = Object.entries(OAUTH_OPENAPI_PATHS).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(OAUTH_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('is valid OpenAPI 3.1', async () => {
    const document = {
      openapi: '3.1.0',
      info: { title: 'oauth fragment', version: '0.1' },
      paths: OAUTH_OPENAPI_PATHS,
      components: {
        schemas: { ...OAUTH_OPENAPI_SCHEMAS, ErrorEnvelope: { type: 'object' } },
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      },
    };
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });
});
