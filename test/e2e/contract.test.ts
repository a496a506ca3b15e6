/**
 * The typed contract as a client sees it: the live OpenAPI document lints clean under redocly's
 * recommended rules, describes every property and parameter, keeps path parameters out of bodies,
 * types every response; the REST routes refuse a body that contradicts the path; and tools/list of
 * both MCP catalogs, in both eras, gives every argument a type and a description.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_KEYS, MUTABLE_KEYS } from '../../src/domain/config.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { OPERATIONS } from '../../src/operations/table.js';
import { SERVICE_VERSION } from '../../src/service.js';
import { ERAS, type ListedTool } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const run = promisify(execFile);
type Json = Record<string, any>;

let svc: RunningService;
let doc: Json;
let scratch: string;

beforeAll(async () => {
  svc = await startService();
  doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
  scratch = await mkdtemp(path.join(tmpdir(), 'conclave-contract-'));
});
afterAll(async () => {
  await svc?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Every `properties` entry in a JSON value, with where it sits. */
function propertiesIn(node: unknown, where: string, out: [string, Json][] = []): [string, Json][] {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) propertiesIn(item, `${where}[${i}]`, out);
  } else if (typeof node === 'object' && node !== null) {
    const properties = (node as Json).properties;
    if (typeof properties === 'object' && properties !== null) {
      // A schema's properties map holds schemas; a map of keyword schemas named "properties" holds strings.
      for (const [name, schema] of Object.entries(properties)) {
        if (typeof schema === 'object' && schema !== null) out.push([`${where}.${name}`, schema as Json]);
      }
    }
    for (const [key, value] of Object.entries(node)) propertiesIn(value, `${where}/${key}`, out);
  }
  return out;
}

/** A JSON type is stated: `type`, a constant, an enum, a $ref, or branches that each state one. */
function typed(schema: Json): boolean {
  if (schema.type !== undefined || schema.$ref !== undefined || 'const' in schema || Array.isArray(schema.enum)) {
    return true;
  }
  const branches = schema.anyOf ?? schema.oneOf;
  return Array.isArray(branches) && branches.length > 0 && branches.every((b: Json) => typed(b));
}

const operations = () =>
  Object.entries(doc.paths as Json).flatMap(([route, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ route, method, op: op as Json })),
  );

describe('the OpenAPI document', () => {
  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const file = path.join(scratch, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const cli = path.resolve('node_modules/.bin/redocly');
    const { stdout } = await run(cli, ['lint', '--extends', 'recommended', '--format', 'json', file], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
    expect(report.problems.map((p: Json) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('is the document the e2e response checks use (test/support/openapi-responses.ts)', () => {
    expect(doc).toEqual(JSON.parse(JSON.stringify(buildOpenApi(OPERATIONS, svc.base, SERVICE_VERSION))));
  });

  it('states the protocol version clients compare, and the license from package.json', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default;
    // The protocol's version, as discovery's protocol_version says it; the build is the health answer's.
    expect(doc.info.version).toBe('0.1');
    expect(doc.info.version).toBe((await call(svc.base, 'GET', '/.well-known/svc.json')).body.protocol_version);
    expect(doc.info.description).toContain(`service build ${SERVICE_VERSION}`);
    expect(doc.info.license.identifier).toBe(pkg.license);
  });

  it('describes and types every property of every schema, and describes every parameter', () => {
    const properties = propertiesIn(doc, '#');
    expect(properties.length).toBeGreaterThan(300);
    const undescribed = properties.filter(([, s]) => s.description === undefined && s.$ref === undefined);
    expect(undescribed.map(([where]) => where)).toEqual([]);
    const untyped = properties.filter(([, s]) => !typed(s) && Object.keys(s).some((k) => k !== 'description'));
    expect(untyped.map(([where]) => where)).toEqual([]);
    for (const { route, method, op } of operations()) {
      for (const p of op.parameters ?? []) expect(p.description, `${method} ${route} ${p.name}`).toBeTruthy();
    }
  });

  it('gives every room operation an example', () => {
    for (const { route, method, op } of operations()) {
      if (!route.startsWith('/api/rooms') || route.endsWith('/stream')) continue;
      const examples = [
        op.requestBody?.content?.['application/json']?.example,
        ...(op.parameters ?? []).map((p: Json) => p.example),
      ].filter((e) => e !== undefined);
      expect(examples.length, `${method} ${route}`).toBeGreaterThan(0);
    }
  });

  it('keeps path parameters out of request bodies', () => {
    const schemas = doc.components.schemas as Json;
    let bodies = 0;
    for (const { route, method, op } of operations()) {
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        const body = (media as Json).schema;
        const resolved = body.$ref ? schemas[body.$ref.split('/').pop()] : body;
        bodies += 1;
        for (const [, param] of route.matchAll(/\{(\w+)\}/g)) {
          expect(Object.keys(resolved.properties ?? {}), `${method} ${route} ${type}`).not.toContain(param);
          expect((media as Json).example ?? {}, `${method} ${route} ${type} example`).not.toHaveProperty(param!);
        }
      }
    }
    expect(bodies).toBeGreaterThanOrEqual(20);
  });

  it('types every JSON response: named components, no open objects', () => {
    const schemas = doc.components.schemas as Json;
    for (const { route, method, op } of operations()) {
      if (!route.startsWith('/api/rooms')) continue;
      const schema = op.responses['200']?.content?.['application/json']?.schema;
      if (!schema) continue;
      expect(schema.$ref, `${method} ${route}`).toMatch(/^#\/components\/schemas\//);
    }
    // A wait's answer is one closed variant per status, each naming the fields of that status.
    const wait = schemas.AwaitNextActionResponse;
    expect(wait.oneOf.map((variant: Json) => variant.properties.status.const)).toEqual([
      'actionable',
      'activity',
      'timeout',
    ]);
    for (const variant of wait.oneOf) expect(variant.additionalProperties).toBe(false);
    for (const name of [
      'AgentRoomView',
      'OutcomeResponse',
      'DecisionSummary',
      'StartChoosingResponse',
      'RoomInvite',
      'CreateRoomResponse',
    ]) {
      const schema = schemas[name];
      expect(schema?.type, name).toBe('object');
      expect(Object.keys(schema.properties ?? {}).length, name).toBeGreaterThan(2);
      expect(schema.additionalProperties, name).toBe(false);
    }
    // A room needs a question or an about text (a non-null string): the body schema says so.
    const either = schemas.CreateRoomRequest.allOf[0].anyOf as Json[];
    expect(either.map((branch) => branch.required)).toEqual([['question'], ['about']]);
    expect(either[1]!.properties.about.type).toBe('string');
    // Requests send the all-optional RoomConfigInput (a settings patch without the keys fixed at
    // creation); every answer that carries a config refers to RoomConfig, every key required.
    const create = schemas.CreateRoomRequest.properties.config;
    expect(create.$ref).toBe('#/components/schemas/RoomConfigInput');
    expect(schemas.UpdateRoomSettingsRequest.properties.settings.$ref).toBe('#/components/schemas/RoomSettingsPatch');
    expect(Object.keys(schemas.RoomConfig.properties).sort()).toEqual([...CONFIG_KEYS].sort());
    expect([...schemas.RoomConfig.required].sort()).toEqual([...CONFIG_KEYS].sort());
    expect(Object.keys(schemas.RoomConfigInput.properties).sort()).toEqual([...CONFIG_KEYS].sort());
    expect(schemas.RoomConfigInput.required).toBeUndefined();
    expect(Object.keys(schemas.RoomSettingsPatch.properties).sort()).toEqual([...MUTABLE_KEYS].sort());
    expect(schemas.RoomSettingsPatch.required).toBeUndefined();
    for (const [name, property] of [
      ['CreateRoomResponse', 'config'] as const,
      ['RoomState', 'config'],
      ['UpdateRoomSettingsResponse', 'config'],
      ['DiscoveryDocument', 'room_config_defaults'],
    ]) {
      expect(schemas[name].properties[property].$ref, name).toBe('#/components/schemas/RoomConfig');
    }
  });

  it('gives every operation a 2xx response example and every request body an example', () => {
    const missing: string[] = [];
    for (const { route, method, op } of operations()) {
      const ok = Object.entries(op.responses as Json).filter(([status]) => status.startsWith('2'));
      const shown = ok.some(([, response]) =>
        Object.values((response as Json).content ?? {}).some(
          (media) => (media as Json).example !== undefined || Object.keys((media as Json).examples ?? {}).length > 0,
        ),
      );
      if (!shown) missing.push(`${method} ${route}: no 2xx response example`);
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        if ((media as Json).example === undefined && !(media as Json).examples) {
          missing.push(`${method} ${route}: ${type} body without an example`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('has no untyped object anywhere: no open additionalProperties without properties, no bare type object', () => {
    const open: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${where}[${i}]`);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Json;
      const properties = Object.keys(schema.properties ?? {}).length > 0;
      const extra = schema.additionalProperties;
      const bareExtra =
        extra === true ||
        (typeof extra === 'object' && extra !== null && Object.keys(extra).every((k) => k === 'description'));
      if (bareExtra && !properties) open.push(`${where}: additionalProperties without a type`);
      const composed = schema.allOf || schema.oneOf || schema.anyOf || schema.$ref;
      if (schema.type === 'object' && !properties && extra === undefined && !composed) {
        open.push(`${where}: type object without properties`);
      }
      for (const [key, value] of Object.entries(schema)) {
        // Example values are data, not schemas.
        if (key !== 'example' && key !== 'examples') walk(value, `${where}/${key}`);
      }
    };
    walk(doc, '#');
    expect(open).toEqual([]);
  });

  it('describes every named schema that is a component member of RoomEvent, and maps each event_type', () => {
    const schemas = doc.components.schemas as Json;
    const union = schemas.RoomEvent;
    expect(union.discriminator.propertyName).toBe('event_type');
    const members = (union.oneOf as Json[]).map((m) => m.$ref.split('/').pop() as string);
    expect(members.length).toBe(14);
    for (const name of members) {
      const member = schemas[name];
      expect(member.properties.data.type, name).toBe('object');
      expect(member.properties.data.additionalProperties, name).toBe(false);
      expect(union.discriminator.mapping[member.properties.event_type.const], name).toBe(
        `#/components/schemas/${name}`,
      );
    }
    expect(schemas.ErrorEnvelope.properties.error.properties.details.$ref).toBe('#/components/schemas/ErrorDetails');
    const payload = schemas.RoomState.properties.resolution_payload;
    expect(JSON.stringify(payload)).toContain('#/components/schemas/MechanismOutput');
  });

  it('documents the transparency log read API: public, typed, with examples', () => {
    for (const route of [
      '/log/checkpoint',
      '/log/checkpoint/{size}',
      '/log/checkpoints',
      '/log/tile/{level}/{index}',
      '/log/proof/inclusion',
      '/log/proof/consistency',
    ]) {
      const op = doc.paths[route]?.get;
      expect(op, route).toBeDefined();
      expect(op.security, route).toEqual([]);
      expect(op.responses['404'], route).toBeDefined();
    }
    expect(doc.paths['/log/checkpoint'].get.responses['200'].content['text/plain']).toBeDefined();
    expect(
      doc.paths['/log/tile/{level}/{index}'].get.responses['200'].content['application/octet-stream'],
    ).toBeDefined();
    expect(doc.paths['/log/proof/inclusion'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/LogInclusionProof',
    );
    expect(doc.paths['/log/proof/consistency'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/LogConsistencyProof',
    );
  });

  it('types every meta, OAuth and log JSON answer with a named component', () => {
    for (const { route, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const schema = (response as Json).content?.['application/json']?.schema;
        if (!schema || !status.startsWith('2')) continue;
        expect(schema.$ref, `${method} ${route} ${status}`).toMatch(/^#\/components\/schemas\//);
      }
    }
  });

  it('has examples that validate against their own schemas (the validator the e2e response checks use)', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ ...doc, $id: 'urn:conclave:contract' });
    const pointer = (parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
    const failures: string[] = [];
    let checked = 0;
    const check = (where: string[], value: unknown, label: string) => {
      const validate = ajv.compile({ $ref: `urn:conclave:contract#/${pointer(where)}` });
      checked += 1;
      if (!validate(value)) failures.push(`${label}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const { route, method, op } of operations()) {
      const media: [string[], Json][] = [];
      for (const [type, content] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        media.push([['paths', route, method, 'requestBody', 'content', type], content as Json]);
      }
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const [type, content] of Object.entries(((response as Json).content ?? {}) as Json)) {
          media.push([['paths', route, method, 'responses', status, 'content', type], content as Json]);
        }
      }
      for (const [where, content] of media) {
        const label = `${method} ${route} ${where.slice(3).join(' ')}`;
        if (content.example !== undefined) check([...where, 'schema'], content.example, label);
        for (const [name, example] of Object.entries((content.examples ?? {}) as Json)) {
          if ((example as Json).value !== undefined)
            check([...where, 'schema'], (example as Json).value, `${label} ${name}`);
        }
      }
      for (const [i, parameter] of ((op.parameters ?? []) as Json[]).entries()) {
        if (parameter.example === undefined) continue;
        const value =
          parameter.schema?.type === 'integer' && typeof parameter.example === 'string'
            ? Number(parameter.example)
            : parameter.example;
        check(
          ['paths', route, method, 'parameters', String(i), 'schema'],
          value,
          `${method} ${route} ${parameter.name}`,
        );
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(80);
  });

  it('describes itself: the live document validates against its own OpenApiDocument schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ ...doc, $id: 'urn:conclave:self' });
    const validate = ajv.compile({ $ref: 'urn:conclave:self#/components/schemas/OpenApiDocument' });
    expect(validate(doc), ajv.errorsText(validate.errors)).toBe(true);
  });

  it('lists per operation the error codes each status can carry', () => {
    const choose = doc.paths['/api/rooms/{slug}/choose'].post.responses;
    const codesOf = (status: string) =>
      choose[status].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
    expect(codesOf('400')).toEqual(
      expect.arrayContaining(['input.invalid', 'decision.not_open', 'choice.invalid_option']),
    );
    expect(codesOf('404')).toEqual(expect.arrayContaining(['room.not_found', 'decision.not_found']));
    expect(codesOf('401')).toContain('auth.required');
    expect(doc.paths['/api/rooms'].post.responses['404']).toBeUndefined();
  });

  it('lists the code close answers while a decision is open (call checks the answer against the document)', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', { body: { question: 'Ship?', options: ['yes', 'no'] } });
    const refused = await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/close`, {
      token: created.body.creator_token,
      body: {},
    });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'decision.not_open']);
  });
});

describe('path parameters on REST', () => {
  it('refuses a body field that contradicts the path with input.invalid, and accepts one that agrees', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Which way?', options: ['a', 'b'] },
    });
    const slug = created.body.slug as string;
    const other = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'Another room' } });
    const contradicted = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
      body: { slug: other.body.slug, display_name: 'mallory' },
    });
    expect(contradicted.status).toBe(400);
    expect(contradicted.body.error.code).toBe('input.invalid');
    expect(contradicted.body.error.details).toMatchObject({ field: 'slug' });
    expect(contradicted.body.error.message).toContain('path');
    // Nothing was joined anywhere.
    const full = await call(svc.base, 'GET', `/api/rooms/${other.body.slug}?include=full`, {
      token: other.body.creator_token,
    });
    expect(full.body.participants).toHaveLength(1);

    const agreeing = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: { slug, display_name: 'ann' } });
    expect(agreeing.status).toBe(200);
    const viaQuery = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome?slug=${other.body.slug}`);
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.body.error.code).toBe('input.invalid');
  });
});

describe.each(ERAS)('MCP tools/list ($era)', ({ connect }) => {
  const listed: Record<string, ListedTool[]> = {};
  beforeAll(async () => {
    for (const path of ['/mcp', '/mcp/host']) {
      const session = await connect(`${svc.base}${path}`);
      listed[path] = await session.tools();
      await session.close();
    }
  });

  it('gives every argument of every tool a type and a description', () => {
    for (const [endpoint, tools] of Object.entries(listed)) {
      expect(tools.length, endpoint).toBeGreaterThan(5);
      for (const tool of tools) {
        const properties = propertiesIn(tool.inputSchema, tool.name);
        expect(properties.length, tool.name).toBeGreaterThan(0);
        for (const [where, schema] of properties) {
          expect(typed(schema), `${endpoint} ${where} has no type`).toBe(true);
          expect(schema.description, `${endpoint} ${where} has no description`).toBeTruthy();
        }
      }
    }
  });

  it('lists every RoomConfig key, described, in create_room.config', () => {
    const create = listed['/mcp/host']!.find((t) => t.name === 'create_room')!;
    const config = create.inputSchema.properties!.config;
    expect(config.type).toBe('object');
    expect(Object.keys(config.properties).sort()).toEqual([...CONFIG_KEYS].sort());
    expect(config.properties.voting_window.description).toMatch(/seconds/i);
  });

  it('types choose.choice as string | integer | (string | integer)[], score ballots as scores, and says which mechanism takes which', () => {
    const choose = listed['/mcp']!.find((t) => t.name === 'choose')!;
    const { choice, scores } = choose.inputSchema.properties!;
    const types = (choice.anyOf as Json[]).map((b) =>
      b.type === 'array' ? `(${(b.items.anyOf as Json[]).map((i) => i.type).join(' | ')})[]` : b.type,
    );
    // An array ballot names options by number or exact text, as a single choice does (src/domain/ballots.ts).
    // No open object: the option→points map is declared as scores (docs/agents.md, One ballot, every framework).
    expect(types.sort()).toEqual(['(string | integer)[]', 'integer', 'string']);
    expect(choice.description).toMatch(/approval.*array.*score_vote.*scores/s);
    expect(scores.type).toBe('array');
    expect(Object.keys(scores.items.properties)).toEqual(['option', 'points']);
  });

  it('annotates every tool truthfully and gives each an output schema', () => {
    const all = [...listed['/mcp']!, ...listed['/mcp/host']!];
    const byName = new Map(all.map((tool) => [tool.name, tool]));
    for (const tool of all) {
      expect(tool.annotations, tool.name).toMatchObject({
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: false,
      });
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    for (const name of ['close_room', 'revoke_invite', 'unregister_webhook']) {
      expect(byName.get(name)?.annotations?.destructiveHint, name).toBe(true);
    }
    for (const name of ['read_room', 'outcome', 'wait', 'list_events']) {
      expect(byName.get(name)?.annotations, name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    expect(byName.get('discuss')?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
  });
});
