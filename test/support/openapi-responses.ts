/**
 * Every response a suite receives through `call` is checked against the live OpenAPI document: the
 * operation's schema for that status. A response the document does not describe (a field it lacks,
 * a wrong type, a status it does not list) fails the test, so the document cannot drift from what
 * the service answers. A non-JSON answer is checked for its status and media type. Routes the document
 * does not cover (pages, MCP, unknown paths) are left alone.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { OPERATIONS } from '../../src/operations/table.js';
import { SERVICE_VERSION } from '../../src/service.js';

type Json = Record<string, any>;

interface Checker {
  doc: Json;
  ajv: Ajv2020;
  validators: Map<string, ValidateFunction>;
  routes: { method: string; template: string; pattern: RegExp }[];
}

const checkers = new Map<string, Promise<Checker>>();

/**
 * The document the service serves at /v1/openapi.json, built the same way here rather than fetched:
 * fetching it would spend a request of the suites' rate-limit budgets.
 */
async function checkerFor(base: string): Promise<Checker> {
  const doc = JSON.parse(JSON.stringify(buildOpenApi(OPERATIONS, base, SERVICE_VERSION))) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: 'urn:conclave:openapi' });
  const routes: Checker['routes'] = [];
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      // A path parameter whose pattern takes slashes (a C2SP tile index) spans several segments.
      const spans = new Set(
        ((op as Json).parameters ?? [])
          .filter((p: Json) => p.in === 'path' && String(p.schema?.pattern ?? '').includes('/'))
          .map((p: Json) => p.name as string),
      );
      const source = template
        .replace(/\./g, '\\.')
        .replace(/\{(\w+)\}/g, (_whole, name: string) => (spans.has(name) ? '.+' : '[^/]+'));
      routes.push({ method: method.toUpperCase(), template, pattern: new RegExp(`^${source}$`) });
    }
  }
  return { doc, ajv, routes, validators: new Map() };
}

const pointer = (parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

export async function checkResponse(
  base: string,
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): Promise<void> {
  const path = url.split('?')[0]!;
  if (path === '/v1/openapi.json') return;
  let checker = checkers.get(base);
  if (!checker) {
    checker = checkerFor(base);
    checkers.set(base, checker);
  }
  const { doc, ajv, routes, validators } = await checker;
  const route = routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(path));
  if (!route) return;
  const responses = doc.paths[route.template][route.method.toLowerCase()].responses as Json;
  const key = String(status) in responses ? String(status) : 'default' in responses ? 'default' : null;
  if (key === null) {
    throw new Error(
      `${method} ${url} answered ${status}, which the OpenAPI document does not list for ${route.method} ${route.template}: ${JSON.stringify(body).slice(0, 400)}`,
    );
  }
  const media = Object.keys(responses[key].content ?? {});
  const type = contentType?.split(';')[0]?.trim() ?? '';
  if (media.length > 0 && !media.includes(type)) {
    throw new Error(
      `${method} ${url} answered ${status} as ${type || 'no content type'}, which the OpenAPI document does not list for ${route.method} ${route.template} (${media.join(', ')})`,
    );
  }
  if (type !== 'application/json' || !responses[key].content?.['application/json']) return;
  const ref = `urn:conclave:openapi#/${pointer(['paths', route.template, route.method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema'])}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `${method} ${url} answered ${status} with a body the OpenAPI document does not describe: ${ajv.errorsText(validate.errors, { separator: '; ' })}\nbody: ${JSON.stringify(body).slice(0, 600)}`,
    );
  }
}
