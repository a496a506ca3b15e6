/**
 * A client generated from the live OpenAPI document works: openapi-typescript turns the document
 * into types, the program in test/fixtures/generated-client (openapi-fetch) compiles against them
 * under `strict`, and, run against this service, drives a room end to end: create, join, discuss,
 * choose, a verified receipt in the outcome, close.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';

const run = promisify(execFile);
const FIXTURE = path.resolve('test/fixtures/generated-client/drive-room.ts');

let svc: RunningService;
let project: string;

beforeAll(async () => {
  svc = await startService();
  project = await mkdtemp(path.join(tmpdir(), 'conclave-generated-client-'));
  await symlink(await realpath('node_modules'), path.join(project, 'node_modules'), 'dir');
});
afterAll(async () => {
  await svc?.stop();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('a client generated from /v1/openapi.json', () => {
  it('compiles under strict and drives a room to a verified outcome', async () => {
    const document = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
    await writeFile(path.join(project, 'openapi-schema.d.ts'), astToString(await openapiTS(document)));
    await copyFile(FIXTURE, path.join(project, 'drive-room.ts'));
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'generated-client-check', private: true, type: 'module' }),
    );
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'DOM'],
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: true,
          noEmit: true,
        },
        files: ['drive-room.ts', 'openapi-schema.d.ts'],
      }),
    );
    const tsc = path.resolve('node_modules/.bin/tsc');
    const compiled = await run(tsc, ['-p', project]).catch((error: { stdout?: string }) => ({
      stdout: error.stdout ?? String(error),
    }));
    expect(compiled.stdout).toBe('');

    const tsx = path.resolve('node_modules/.bin/tsx');
    const { stdout } = await run(tsx, [path.join(project, 'drive-room.ts'), svc.base], { cwd: project });
    const summary = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(summary).toMatchObject({
      options: ['eu-west', 'us-east'],
      winner: 'eu-west',
      signature: 'EdDSA',
      concluded: 'concluded',
    });
    expect(summary.receipt_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(summary.conclusion_receipt).toMatch(/^sha256:[0-9a-f]{64}$/);
  }, 120_000);
});
