/**
 * A fuzzer over the whole HTTP surface, generated from the service's own OpenAPI document: every
 * route with path parameters drawn from real slugs and garbage, bodies drawn from each request
 * schema and then mutated (wrong types, unknown keys, hostile strings, lone surrogates, huge
 * numbers, deep nesting, malformed JSON), credentials mixed from real tokens, passwords, invites and
 * junk, MCP tool calls with the same arguments, and a share of malformed raw HTTP. It checks every
 * answer: no 5xx, the error envelope on every non-2xx (RFC 6749's flat form on /oauth/*, JSON-RPC
 * on /mcp), and afterwards no credential it used anywhere in the service's log.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { freePort } from '../support/child-service.js';
import { killWithTestProcess } from '../support/kill-with-test-process.js';
import { BUILT_SERVICE, repoRoot } from '../support/built.js';

/** The operator's admin token, so the device flow and operator acts are fuzzed too (and looked for in the log). */
const ADMIN_TOKEN = 'fuzz-admin-token-0123456789abcdef0123456789';

export interface FuzzOptions {
  requests: number;
  concurrency?: number;
  seed?: number;
  /** Extra environment for the service process (e.g. STORE=redis). */
  env?: Record<string, string>;
  /** Called every `progressEvery` requests with the running report. */
  onProgress?: (report: FuzzReport) => void;
  progressEvery?: number;
}

export interface FuzzReport {
  sent: number;
  statuses: Record<string, number>;
  serverErrors: Sample[];
  nonEnvelope: Sample[];
  transportErrors: Record<string, number>;
  /** Resident set size of the service process, in MiB, sampled as the run goes. */
  rss: { atRequest: number; mib: number }[];
  rssAfterWarmUp: number;
  rssAfterRun: number;
  credentialsInLog: string[];
  logLines: number;
  crashed: boolean;
  seconds: number;
}

interface Sample {
  request: string;
  status: number;
  body: string;
}

interface Seeds {
  slugs: string[];
  tokens: string[];
  passwords: string[];
  invites: string[];
  participantIds: string[];
  webhookIds: string[];
}

interface Operation {
  method: string;
  path: string;
  query: string[];
  headers: string[];
  body: unknown;
  bodyType: 'json' | 'form' | null;
}

interface FuzzRequest {
  label: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  kind: 'rest' | 'oauth' | 'mcp' | 'sse';
}

// ---------------------------------------------------------------------------------------------
// The service under test

interface Service {
  base: string;
  child: ChildProcess;
  logFile: string;
  dataDir: string;
}

/** The service's V8 old-space limit during a fuzz run (see startService). */
const HEAP_LIMIT_MIB = 128;

async function startService(env: Record<string, string>): Promise<Service> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-fuzz-'));
  const logFile = path.join(dataDir, 'service.log');
  const port = await freePort();
  const log = createWriteStream(logFile);
  // A bounded old space: V8 grows an unbounded heap with the allocation rate, which made RSS track
  // speed, not leaks. Within a bound, garbage is collected and a leak ends in a crash (reported).
  const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_LIMIT_MIB}`, BUILT_SERVICE], {
    cwd: repoRoot,
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      WARMUP_TURNS: '0',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
      RATE_LIMIT_CREATE_PER_HOUR: '0',
      // Wrong passwords and tokens from one address would hold the fuzzer's credentials too.
      GUESS_LIMIT_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
      RATE_LIMIT_ISSUER_PER_MIN: '0',
      RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
      RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
      CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  killWithTestProcess(child);
  const base = `http://127.0.0.1:${port}`;
  const giveUpAt = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited at start (${child.exitCode}); see ${logFile}`);
    // The app's own route: /healthz answers while the modules still load (src/start.ts).
    const up = await fetch(`${base}/.well-known/jwks.json`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > giveUpAt) throw new Error('service did not start within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { base, child, logFile, dataDir };
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

// ---------------------------------------------------------------------------------------------
// Seeding: real rooms and credentials, so that requests get past the door

async function json(base: string, method: string, url: string, body?: unknown, token?: string): Promise<any> {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return response.json();
}

async function seed(base: string): Promise<Seeds> {
  const seeds: Seeds = { slugs: [], tokens: [], passwords: [], invites: [], participantIds: [], webhookIds: [] };
  const configs: Record<string, unknown>[] = [
    { voting_window: 3600 },
    { visibility: 'private', voting_window: 3600 },
    { mechanism: 'ranked_choice', voting_window: 3600 },
    { mechanism: 'approval', early_close: true, settle_window: 5 },
    { password: 'fuzz-room-password-1', voting_window: 3600 },
  ];
  for (const [i, config] of configs.entries()) {
    const created = await json(base, 'POST', '/api/rooms', {
      question: `Fuzz room ${i}?`,
      options: ['alpha', 'beta', 'gamma'],
      config,
    });
    if (!created.slug) continue;
    seeds.slugs.push(created.slug);
    seeds.tokens.push(created.creator_token);
    seeds.participantIds.push(created.participant_id);
    if (typeof config.password === 'string') seeds.passwords.push(config.password);
    const joined = await json(base, 'POST', `/api/rooms/${created.slug}/join`, {
      display_name: `fuzzer ${i}`,
      ...(typeof config.password === 'string' ? { password: config.password } : {}),
    });
    if (joined.participant_token) {
      seeds.tokens.push(joined.participant_token);
      seeds.participantIds.push(joined.participant_id);
    }
    const invite = await json(base, 'POST', `/api/rooms/${created.slug}/invites`, {}, created.creator_token);
    for (const value of [invite.code, invite.invite_token, invite.token]) {
      if (typeof value === 'string') seeds.invites.push(value);
    }
  }
  return seeds;
}

// ---------------------------------------------------------------------------------------------
// Generation

async function operations(base: string): Promise<Operation[]> {
  const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as any;
  const resolve = (schema: any): any =>
    schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').at(-1)]) : schema;
  const result: Operation[] = [];
  for (const [route, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const parameters: any[] = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      const bodyType = content['application/json']
        ? 'json'
        : content['application/x-www-form-urlencoded']
          ? 'form'
          : null;
      const schema = resolve((content['application/json'] ?? content['application/x-www-form-urlencoded'])?.schema);
      result.push({
        method: method.toUpperCase(),
        path: route,
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        headers: parameters.filter((p) => p.in === 'header').map((p) => p.name),
        body: schema ? inlineRefs(schema, resolve, 0) : null,
        bodyType,
      });
    }
  }
  return result;
}

function inlineRefs(schema: any, resolve: (s: any) => any, depth: number): any {
  if (depth > 8 || schema === null || typeof schema !== 'object') return schema;
  const resolved = resolve(schema);
  if (Array.isArray(resolved)) return resolved.map((s) => inlineRefs(s, resolve, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resolved)) out[key] = inlineRefs(value, resolve, depth + 1);
  return out;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  'a\udc00b',
  '\u202e\u2066',
  '<script>alert(1)</script>',
  '"; DROP TABLE rooms; --',
  '../../../../etc/passwd',
  '%00%ff',
  '$' + '{jndi:ldap://x}', // split so it reads as the hostile literal, not a placeholder
  '\\u0000',
  '🙂'.repeat(50),
  'x'.repeat(70_000),
  '__proto__',
  'constructor',
  'NaN',
  '1e309',
];

const HOSTILE_NUMBERS = [0, -1, 1e308, -1e308, 2 ** 53, 0.1, -0, 1e-320];

function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS),
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)), maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
}

function anyJson(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { maxDepth: 3 },
    fc.jsonValue({ maxDepth: 3 }),
    hostileString(),
    fc.constantFrom(...HOSTILE_NUMBERS),
    fc.constant(null),
  );
}

/** A value for a JSON schema: usually valid-looking, sometimes mutated. */
function fromSchema(schema: any, seeds: Seeds, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return anyJson();
  const valid = validFromSchema(schema, seeds, depth);
  return fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: anyJson() });
}

function validFromSchema(schema: any, seeds: Seeds, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((s: any) => fromSchema(s, seeds, depth + 1)));
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('alpha', 'beta', 'gamma', 'yes', 'no', 'agree', 'reviewer') },
        { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
        { weight: 1, arbitrary: fc.constantFrom(...seeds.participantIds, ...seeds.invites, 'http://127.0.0.1:9/hook') },
        { weight: 1, arbitrary: hostileString() },
      );
    case 'integer':
      return fc.oneof(fc.integer({ min: -2, max: 100_000 }), fc.constantFrom(...HOSTILE_NUMBERS));
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(...HOSTILE_NUMBERS));
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fromSchema(schema.items, seeds, depth + 1), { maxLength: 6 });
    case 'object': {
      const properties: Record<string, any> = schema.properties ?? {};
      const keys = Object.keys(properties).filter((k) => k !== 'slug');
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const key of keys) record[key] = fromSchema(properties[key], seeds, depth + 1);
      return fc
        .tuple(
          fc.record(record, { requiredKeys: (schema.required ?? []).filter((k: string) => keys.includes(k)) }),
          fc.option(fc.dictionary(hostileString(), anyJson(), { maxKeys: 2 }), { freq: 6 }),
        )
        .map(([value, extra]) => (extra ? { ...extra, ...value } : value));
    }
    default:
      return anyJson();
  }
}

function pathValue(name: string, seeds: Seeds): fc.Arbitrary<string> {
  const real =
    name === 'slug'
      ? seeds.slugs
      : name === 'participant'
        ? seeds.participantIds
        : name === 'code'
          ? seeds.invites
          : seeds.webhookIds;
  return fc.oneof(
    { weight: 6, arbitrary: real.length > 0 ? fc.constantFrom(...real) : fc.constant('nothing') },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s) || 'x') },
    { weight: 1, arbitrary: fc.constantFrom('%ff', '%00', 'a'.repeat(250), '..', '%2e%2e', '%ED%A0%80') },
  );
}

function credentialHeaders(seeds: Seeds): fc.Arbitrary<Record<string, string>> {
  const bearer = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...seeds.tokens) },
    { weight: 1, arbitrary: fc.constant(ADMIN_TOKEN) },
    { weight: 1, arbitrary: fc.constantFrom('t_invalid', 'Bearer', 'eyJ0eXAiOiJKV1QifQ.e30.x', '') },
  );
  return fc
    .record(
      {
        authorization: bearer.map((t) => `Bearer ${t}`),
        'x-room-password': fc.constantFrom(...seeds.passwords, 'wrong password'),
        'x-mandate': fc.constantFrom('eyJhbGciOiJFZERTQSJ9.eyJ4IjoxfQ.c2ln', 'not-a-jws'),
        'idempotency-key': fc.oneof(
          fc.constantFrom('k1', 'k2', 'k3'),
          fc.string({ maxLength: 8 }),
          fc.constant(' bad key '),
        ),
        'content-type': fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/json; charset=latin1',
        ),
      },
      { requiredKeys: [] },
    )
    .map((headers) => {
      // Header values must be latin-1 for fetch; drop what it cannot send.
      for (const [key, value] of Object.entries(headers))
        if (!/^[\x20-\x7e]*$/.test(value)) delete (headers as any)[key];
      return headers as Record<string, string>;
    });
}

function bodyText(value: unknown, type: 'json' | 'form'): fc.Arbitrary<string> {
  const serialized = type === 'form' ? formOf(value) : JSON.stringify(value);
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(serialized ?? '') },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[]', 'null', '"x"', '{"body":"hi","n":1e309}') },
    { weight: 1, arbitrary: fc.constant(`{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`) },
    { weight: 1, arbitrary: fc.constant(`{"body":"lone \\ud800","option":"\\udfff","question":"\\ud83d?"}`) },
  );
}

function formOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  return Object.entries(value)
    .map(
      ([k, v]) =>
        `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`,
    )
    .join('&');
}

function restRequest(op: Operation, seeds: Seeds, base: string): fc.Arbitrary<FuzzRequest> {
  const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const pathArb = fc.tuple(...params.map((p) => pathValue(p, seeds))).map((values) => {
    let url = op.path;
    params.forEach((p, i) => {
      url = url.replace(`{${p}}`, values[i]!);
    });
    return url;
  });
  const queryArb = fc
    .subarray([...op.query, 'token', 'password', 'junk'], { maxLength: 3 })
    .chain((keys) =>
      fc.tuple(
        ...keys.map((key) =>
          fc
            .oneof(
              key === 'wait'
                ? fc.constantFrom('0', '1')
                : fc.constantFrom('0', '1', '5', 'alpha', 'completion', 'activity'),
              key === 'token' ? fc.constantFrom(...seeds.tokens) : fc.string({ maxLength: 6 }),
            )
            .map((value) => `${encodeURIComponent(key)}=${encodeURIComponent(key === 'wait' ? '0' : value)}`),
        ),
      ),
    )
    // A long-poll must not park for its default wait: the fuzzer measures answers, not timeouts.
    .map((pairs) =>
      op.path.endsWith('/next-action') && !pairs.some((pair) => pair.startsWith('wait='))
        ? [...pairs, 'wait=0']
        : pairs,
    )
    .map((pairs) => (pairs.length > 0 ? `?${pairs.join('&')}` : ''));
  const bodyArb = op.bodyType
    ? fromSchema(op.body, seeds).chain((value) => bodyText(value, op.bodyType!))
    : fc.option(fc.constant('{"unexpected":true}'), { freq: 10 });
  return fc
    .tuple(pathArb, queryArb, credentialHeaders(seeds), bodyArb, fc.boolean())
    .map(([url, query, headers, body, typed]) => {
      const kind = op.path.startsWith('/oauth/') ? 'oauth' : op.path.endsWith('/events/stream') ? 'sse' : 'rest';
      const withType = { ...headers };
      if (op.bodyType === 'form' && typed) withType['content-type'] = 'application/x-www-form-urlencoded';
      else if (op.bodyType === 'json' && !withType['content-type']) withType['content-type'] = 'application/json';
      return {
        label: `${op.method} ${op.path}`,
        method: op.method,
        url: `${base}${url}${query}`,
        headers: withType,
        ...(body !== null && body !== undefined && op.method !== 'GET' ? { body } : {}),
        kind,
      };
    });
}

const MCP_PATHS = ['/mcp', '/mcp/host'];
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

/** Every tool of every catalog, as the server lists them (plus one that does not exist). */
async function mcpTools(base: string): Promise<{ route: string; tool: string }[]> {
  const tools: { route: string; tool: string }[] = [];
  for (const route of MCP_PATHS) {
    const text = await (
      await fetch(`${base}${route}`, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    ).text();
    const json = text.includes('data: ') ? text.slice(text.indexOf('data: ') + 6).split('\n')[0]! : text;
    const listed = (JSON.parse(json) as { result?: { tools?: { name: string }[] } }).result?.tools ?? [];
    tools.push(...listed.map(({ name }) => ({ route, tool: name })), { route, tool: 'no_such_tool' });
  }
  return tools;
}

function mcpRequest(seeds: Seeds, base: string, tools: { route: string; tool: string }[]): fc.Arbitrary<FuzzRequest> {
  const args = fc.record(
    {
      slug: pathValue('slug', seeds),
      token: fc.constantFrom(...seeds.tokens, 't_bad'),
      body: hostileString(),
      option: hostileString(),
      choice: fc.oneof(fc.constantFrom('alpha', 'beta'), anyJson()),
      question: hostileString(),
      options: fc.array(hostileString(), { maxLength: 4 }),
      wait_seconds: fc.constantFrom(0, 1),
      idempotency_key: fc.constantFrom('k1', 'k2'),
      password: fc.constantFrom(...seeds.passwords, 'nope'),
    },
    { requiredKeys: [] },
  );
  const call = fc.tuple(fc.constantFrom(...tools), args).map(([{ route, tool }, a]) => ({
    route,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: { ...a, wait_seconds: 0 } },
    }),
  }));
  const malformed = fc.tuple(
    fc.constantFrom(...MCP_PATHS),
    fc.constantFrom(
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      '{',
      '[]',
      '{"jsonrpc":"1.0"}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"discuss","arguments":{"body":"\\ud800"}}}',
    ),
  );
  const message = fc.oneof(
    { weight: 8, arbitrary: call },
    { weight: 1, arbitrary: malformed.map(([route, body]) => ({ route, body })) },
  );
  return fc
    .tuple(message, fc.constantFrom('2025-11-25', '2025-06-18', '1999-01-01'))
    .map(([{ route, body }, version]) => ({
      label: `POST ${route}`,
      method: 'POST',
      url: `${base}${route}`,
      headers: { ...MCP_HEADERS, 'mcp-protocol-version': version },
      body,
      kind: 'mcp' as const,
    }));
}

// ---------------------------------------------------------------------------------------------
// Checking the answers

function isEnvelope(body: any): boolean {
  return typeof body?.error?.code === 'string' && typeof body.error.message === 'string';
}

function checkAnswer(
  request: FuzzRequest,
  status: number,
  contentType: string,
  text: string,
  report: FuzzReport,
): void {
  report.statuses[status] = (report.statuses[status] ?? 0) + 1;
  const sample = {
    request: `${request.label} ${request.url.slice(0, 120)} ${request.body?.slice(0, 80) ?? ''}`,
    status,
    body: text.slice(0, 300),
  };
  if (status >= 500) {
    report.serverErrors.push(sample);
    return;
  }
  if (status < 400) return;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const ok =
    request.kind === 'oauth'
      ? typeof body?.error === 'string' || isEnvelope(body)
      : request.kind === 'mcp'
        ? isEnvelope(body) || body?.jsonrpc === '2.0' || contentType.includes('event-stream')
        : isEnvelope(body);
  if (!ok) report.nonEnvelope.push(sample);
}

async function send(request: FuzzRequest, report: FuzzReport): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.kind === 'sse' ? 300 : 15_000);
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: controller.signal,
    });
    const contentType = response.headers.get('content-type') ?? '';
    if (request.kind === 'sse' && response.status === 200) {
      report.statuses[200] = (report.statuses[200] ?? 0) + 1;
      controller.abort();
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    checkAnswer(request, response.status, contentType, await response.text(), report);
  } catch (error) {
    const code = (error as any)?.cause?.code ?? (error as Error).name;
    if (code === 'AbortError' && request.kind === 'sse') return;
    report.transportErrors[code] = (report.transportErrors[code] ?? 0) + 1;
  } finally {
    clearTimeout(timer);
  }
}

/** Malformed HTTP straight on a socket; answers must still be envelopes. */
const RAW_REQUESTS = [
  'GET /api/rooms/%ff HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
  'POST /api/rooms HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  'GET / HTTP/1.1\r\n\r\n',
  `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`,
  'GARBAGE\r\n\r\n',
];

function sendRaw(base: string, text: string, report: FuzzReport): Promise<void> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () =>
      socket.end(text.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')),
    );
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', () => undefined);
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('close', () => {
      const [head = '', ...rest] = answer.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      if (Number.isFinite(status)) {
        checkAnswer(
          { label: 'RAW', method: 'RAW', url: text.slice(0, 60), headers: {}, kind: 'rest' },
          status,
          '',
          rest.join('\r\n\r\n'),
          report,
        );
      } else {
        report.transportErrors.raw_no_answer = (report.transportErrors.raw_no_answer ?? 0) + 1;
      }
      resolve();
    });
  });
}

// ---------------------------------------------------------------------------------------------

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const service = await startService(options.env ?? {});
  const report: FuzzReport = {
    sent: 0,
    statuses: {},
    serverErrors: [],
    nonEnvelope: [],
    transportErrors: {},
    rss: [],
    rssAfterWarmUp: 0,
    rssAfterRun: 0,
    credentialsInLog: [],
    logLines: 0,
    crashed: false,
    seconds: 0,
  };
  try {
    const seeds = await seed(service.base);
    const ops = await operations(service.base);
    const generators = fc.oneof(...ops.map((op) => ({ weight: 4, arbitrary: restRequest(op, seeds, service.base) })), {
      weight: 10,
      arbitrary: mcpRequest(seeds, service.base, await mcpTools(service.base)),
    });
    const requests = fc.sample(generators, { numRuns: options.requests, seed: options.seed ?? 1 });
    const warmUpAt = Math.min(10_000, Math.floor(options.requests / 10));
    const progressEvery = options.progressEvery ?? 10_000;
    let next = 0;
    const worker = async () => {
      while (next < requests.length && report.crashed === false) {
        const index = next++;
        if (index % 50 === 49) await sendRaw(service.base, RAW_REQUESTS[index % RAW_REQUESTS.length]!, report);
        await send(requests[index]!, report);
        report.sent++;
        if (report.sent === warmUpAt) report.rssAfterWarmUp = await rssMiB(service.child.pid!);
        if (report.sent % progressEvery === 0) {
          report.rss.push({ atRequest: report.sent, mib: await rssMiB(service.child.pid!) });
          options.onProgress?.(report);
        }
        if (service.child.exitCode !== null || service.child.signalCode !== null) report.crashed = true;
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker));
    // Let timers and sockets of the run settle before the last reading.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    report.rssAfterRun = await rssMiB(service.child.pid!);
    report.crashed ||= service.child.exitCode !== null || service.child.signalCode !== null;

    const log = await readFile(service.logFile, 'utf8');
    report.logLines = log.split('\n').length;
    const credentials = [ADMIN_TOKEN, ...seeds.tokens, ...seeds.passwords, ...seeds.invites].filter(
      (c) => c.length >= 8,
    );
    report.credentialsInLog = credentials.filter((c) => log.includes(c) || log.includes(encodeURIComponent(c)));
  } finally {
    report.seconds = Math.round((performance.now() - started) / 1000);
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
    await rm(service.dataDir, { recursive: true, force: true });
  }
  return report;
}

/** The one-paragraph summary `npm run fuzz` prints and the short test reports on failure. */
export function summarize(report: FuzzReport): string {
  const lines = [
    `requests: ${report.sent} in ${report.seconds} s; log lines: ${report.logLines}`,
    `statuses: ${JSON.stringify(report.statuses)}`,
    `5xx: ${report.serverErrors.length}; non-envelope: ${report.nonEnvelope.length}; transport errors: ${JSON.stringify(report.transportErrors)}`,
    `RSS MiB: after warm-up ${report.rssAfterWarmUp}, after run ${report.rssAfterRun} (ratio ${(report.rssAfterRun / Math.max(report.rssAfterWarmUp, 1)).toFixed(2)}); over time ${report.rss.map((r) => `${r.atRequest}:${r.mib}`).join(' ')}`,
    `credentials found in the log: ${report.credentialsInLog.length}; crashed: ${report.crashed}`,
  ];
  for (const sample of [...report.serverErrors, ...report.nonEnvelope].slice(0, 10)) {
    lines.push(`  ${sample.status} ${sample.request}\n    → ${sample.body}`);
  }
  return lines.join('\n');
}
