/**
 * The client package's emitted declarations, read the way an editor reads them: the package's own
 * build (packages/client/tsconfig.json) writes the .d.ts files to a scratch folder, and TypeScript's
 * language service, over a small program that imports them, answers what hover shows. Every
 * parameter of every method that calls a route carries the description the OpenAPI document gives
 * it (path, query and body alike), and a ballot whose shape the declared mechanism refuses does not
 * compile while every right one does (src/client/ballots.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveOpenApi } from '../../scripts/client-types.js';
import { ROUTES } from '../../src/client/routes.js';

const exec = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

type Json = Record<string, unknown>;

/** A program of one file over the emitted declarations, and what the language service says of it. */
function languageService(dir: string, text: string) {
  const file = path.join(dir, 'calls.ts');
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    types: [],
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  };
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [file],
    getScriptVersion: () => '1',
    getScriptSnapshot: (name) => {
      const content = name === file ? text : ts.sys.readFile(name);
      return content === undefined ? undefined : ts.ScriptSnapshot.fromString(content);
    },
    getCurrentDirectory: () => dir,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (name) => name === file || ts.sys.fileExists(name),
    readFile: (name) => (name === file ? text : ts.sys.readFile(name)),
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  const service = ts.createLanguageService(host);
  return {
    /** What hover shows at `offset`: the documentation and the JSDoc tags, as text. */
    hover(offset: number): string {
      const info = service.getQuickInfoAtPosition(file, offset);
      const tags = (info?.tags ?? []).map((tag) => ts.displayPartsToString(tag.text));
      return [ts.displayPartsToString(info?.documentation), ...tags].join('\n');
    },
    /** The 1-based lines with a type error. */
    errorLines(): number[] {
      return service
        .getSemanticDiagnostics(file)
        .map((d) => (d.start === undefined ? 0 : text.slice(0, d.start).split('\n').length));
    },
  };
}

/** Every field a route's method takes, with the description the OpenAPI document gives it. */
function describedFields(): { method: string; field: string; description: string }[] {
  const doc = liveOpenApi() as unknown as {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Json };
  };
  const resolve = (schema: Json | undefined): Json | undefined =>
    typeof schema?.$ref === 'string'
      ? (doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] as Json)
      : schema;
  const fields: { method: string; field: string; description: string }[] = [];
  for (const [method, route] of Object.entries(ROUTES)) {
    if (!('operation' in route)) continue;
    const operation = doc.paths[route.path]?.[route.method.toLowerCase()];
    expect(operation?.operationId, method).toBe(route.operation);
    for (const parameter of (operation!.parameters ?? []) as Json[]) {
      if (parameter.in !== 'path' && parameter.in !== 'query') continue;
      fields.push({ method, field: String(parameter.name), description: String(parameter.description) });
    }
    const body = resolve(
      ((operation!.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json']
        ? ((((operation!.requestBody as Json).content as Json)['application/json'] as Json).schema as Json)
        : undefined,
    );
    for (const [field, schema] of Object.entries((body?.properties ?? {}) as Record<string, Json>)) {
      if (typeof schema.description === 'string') fields.push({ method, field, description: schema.description });
    }
  }
  return fields;
}

describe('the client package’s declarations', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-client-dts-'));
    await exec(
      process.execPath,
      [tsc, '-p', path.join(repoRoot, 'packages', 'client', 'tsconfig.json'), '--outDir', dir, '--emitDeclarationOnly'],
      { cwd: repoRoot },
    );
  }, 240_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('show the OpenAPI description of every parameter of every route method on hover', () => {
    const fields = describedFields();
    expect(fields.length).toBeGreaterThan(60);
    const lines = ["import type { ConclaveClient } from './client/index.js';", 'declare const client: ConclaveClient;'];
    const markers: { at: number; field: (typeof fields)[number] }[] = [];
    for (const field of fields) {
      // A room route's call names its room, so overloads resolve as in a real call.
      const room = field.field !== 'slug' && ROUTES[field.method as keyof typeof ROUTES].path.includes('{slug}');
      const prefix = `void client.${field.method}({ ${room ? 'slug: "k7mq2xw9pa", ' : ''}`;
      const offset = lines.join('\n').length + 1 + prefix.length;
      lines.push(`${prefix}${field.field}: undefined as never });`);
      markers.push({ at: offset, field });
    }
    const service = languageService(dir, lines.join('\n'));
    const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
    const missing = markers
      .filter(({ at, field }) => !flat(service.hover(at)).includes(flat(field.description)))
      .map(({ at, field }) => `${field.method}.${field.field}: ${flat(service.hover(at)).slice(0, 80)}`);
    expect(missing).toEqual([]);
  }, 120_000);

  it('refuse a ballot the declared mechanism does not take, and accept each one it does', () => {
    const calls = [
      "import type { ConclaveClient } from './client/index.js';",
      'export async function calls(client: ConclaveClient, slug: string): Promise<void> {',
      // Lines 3 to 11 compile: each mechanism's own shape, or any shape when none is declared.
      "  await client.choose({ slug, mechanism: 'plurality', choice: 'alpha' });",
      "  await client.choose({ slug, mechanism: 'simple_majority', choice: 2 });",
      "  await client.choose({ slug, mechanism: 'approval', choice: [1, 'beta'] });",
      "  await client.choose<'ranked_pairwise'>(slug, { choice: ['beta', 'alpha'], reason: 'order' });",
      "  await client.choose({ slug, mechanism: 'score_vote', choice: { alpha: 5 } });",
      "  await client.choose({ slug, mechanism: 'quadratic_vote', scores: [{ option: 'alpha', points: 4 }] });",
      '  await client.choose({ slug, choice: { alpha: 5 } });',
      "  await client.choose(slug, { choice: 'alpha', decision: 2 });",
      '  await client.choose({ slug, scores: [{ option: 1, points: 3 }] });',
      // Lines 12 to 17 do not: the wrong shape for the declared mechanism.
      "  await client.choose({ slug, mechanism: 'approval', choice: 'alpha' });",
      "  await client.choose({ slug, mechanism: 'plurality', choice: ['alpha'] });",
      "  await client.choose<'ranked_choice'>(slug, { choice: { alpha: 1 } });",
      "  await client.choose({ slug, mechanism: 'score_vote', choice: 'alpha' });",
      "  await client.choose({ slug, mechanism: 'plurality', scores: [{ option: 1, points: 1 }] });",
      "  await client.choose({ slug, mechanism: 'quadratic_vote' });",
      '}',
    ];
    const service = languageService(dir, calls.join('\n'));
    expect([...new Set(service.errorLines())]).toEqual([12, 13, 14, 15, 16, 17]);
  }, 120_000);
});
