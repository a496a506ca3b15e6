/**
 * The client package as a user gets it: `npm pack` of packages/client (which builds it from
 * src/client), `npm install <tarball>` in a fresh project outside the repository (from the npm
 * cache, offline), then: it installs small and fast with nothing to build, its declarations carry
 * nothing of the server, a strict TypeScript program with browser typings compiles with typed
 * answers, the wrong calls fail on exactly their lines, and plain Node drives a real room with it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningService, startService } from '../support/service.js';
import { runWalk } from './walk-script.js';

const exec = promisify(execFile);
const NAME = '@conclave-rooms/client';
const ADMIN_TOKEN = 'client-pack-admin-token-0123456789abcdef';
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = path.join(repoRoot, 'packages', 'client');
const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

interface Installed {
  name: string;
  dir: string;
  manifest: { private?: boolean; scripts?: Record<string, string>; dependencies?: Record<string, string> };
}

/** Every package under node_modules, nested ones included. */
async function installedPackages(nodeModules: string): Promise<Installed[]> {
  const found: Installed[] = [];
  const entries = await readdir(nodeModules, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dirs = entry.name.startsWith('@')
      ? (await readdir(path.join(nodeModules, entry.name))).map((child) => path.join(nodeModules, entry.name, child))
      : [path.join(nodeModules, entry.name)];
    for (const dir of dirs) {
      const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
      found.push({ name: manifest.name, dir, manifest });
      found.push(...(await installedPackages(path.join(dir, 'node_modules'))));
    }
  }
  return found;
}

/** Every file below `dir`, with its size. */
async function files(dir: string): Promise<{ file: string; size: number }[]> {
  const out: { file: string; size: number }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await files(full)));
    else out.push({ file: full, size: (await stat(full)).size });
  }
  return out;
}

/** Compiles `file` in the project under strict, with browser typings only (no Node types, no skipLibCheck). */
async function compile(project: string, file: string): Promise<{ code: number; output: string }> {
  const config = `tsconfig.${file}.json`;
  const compilerOptions = {
    strict: true,
    noEmit: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    lib: ['es2023', 'dom', 'dom.iterable'],
    types: [],
  };
  await writeFile(path.join(project, config), JSON.stringify({ compilerOptions, files: [file] }));
  try {
    const { stdout } = await exec(process.execPath, [tsc, '-p', config], { cwd: project });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}

/** A typing fixture of test/client/typing, importing the installed package instead of the source. */
async function fixture(name: string): Promise<string> {
  const text = await readFile(path.join(repoRoot, 'test', 'client', 'typing', name), 'utf8');
  const rewritten = text.replace("from '../../../src/client/index.js'", `from '${NAME}'`);
  expect(rewritten).not.toBe(text);
  return rewritten;
}

describe('the packed client package', () => {
  let svc: RunningService;
  let project: string;
  let installMs: number;
  let tarballBytes: number;

  beforeAll(async () => {
    svc = await startService({ env: { CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    project = await mkdtemp(path.join(tmpdir(), 'conclave-client-pack-'));
    await exec('npm', ['pack', '--pack-destination', project, '--loglevel=error'], {
      cwd: packageDir,
      timeout: 180_000,
    });
    const tarball = (await readdir(project)).find((file) => file.endsWith('.tgz'))!;
    tarballBytes = (await stat(path.join(project, tarball))).size;
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'user-project', type: 'module', private: true }),
    );
    // As a user installs it (install scripts allowed), but offline: the test stays on loopback. Its
    // dependencies come along as tarballs packed from the repository's installed copies (the versions
    // the lockfile pins): resolving their ranges from the npm cache alone would need their registry
    // metadata, which `npm ci` never fetches, so a fresh machine's cache cannot answer it.
    const manifest = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      await exec('npm', ['pack', path.join(repoRoot, 'node_modules', name), '--pack-destination', project], {
        cwd: project,
        timeout: 60_000,
      });
    }
    const dependencies = (await readdir(project)).filter((file) => file.endsWith('.tgz') && file !== tarball);
    const started = performance.now();
    await exec(
      'npm',
      [
        'install',
        path.join(project, tarball),
        ...dependencies.map((file) => path.join(project, file)),
        '--offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      { cwd: project, timeout: 120_000 },
    );
    installMs = performance.now() - started;
  }, 360_000);
  afterAll(async () => {
    await svc?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('installs in under 15 s as at most 10 packages, with nothing to build and no install scripts', async () => {
    const nodeModules = path.join(project, 'node_modules');
    const packages = await installedPackages(nodeModules);
    const all = await files(nodeModules);
    const bytes = all.reduce((sum, f) => sum + f.size, 0);
    console.log(
      `client package: tarball ${(tarballBytes / 1024).toFixed(1)} kB; install ${Math.round(installMs)} ms, ` +
        `${packages.length} packages (${packages.map((p) => p.name).join(', ')}), ${(bytes / 1e6).toFixed(2)} MB`,
    );
    expect(installMs).toBeLessThan(15_000);
    expect(packages.length).toBeLessThanOrEqual(10);
    for (const { name, manifest } of packages) {
      for (const script of INSTALL_SCRIPTS) expect(manifest.scripts?.[script], `${name} ${script}`).toBeUndefined();
    }
    expect(all.filter((f) => f.file.endsWith('.node') || f.file.endsWith('binding.gyp'))).toEqual([]);
    const own = packages.find((p) => p.name === NAME)!;
    expect(own.manifest.private).toBeUndefined();
    expect(Object.keys(own.manifest.dependencies ?? {}).sort()).toEqual([
      '@noble/curves',
      '@noble/hashes',
      'canonicalize',
      'eventsource-parser',
    ]);
  });

  it('publishes declarations with nothing of the server in them', async () => {
    const own = path.join(project, 'node_modules', ...NAME.split('/'));
    const declarations = (await files(own)).filter((f) => f.file.endsWith('.d.ts'));
    expect(declarations.length).toBeGreaterThan(5);
    const leaks: string[] = [];
    for (const { file } of declarations) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/fastify|zod|xstate|RequestContext/g)) {
        leaks.push(`${path.relative(own, file)}: ${match[0]}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('compiles a strict program with typed answers, without Node typings or skipLibCheck', async () => {
    await writeFile(path.join(project, 'right.ts'), await fixture('right-calls.ts'));
    const result = await compile(project, 'right.ts');
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('refuses each wrong call on its own line, and nothing else', async () => {
    const text = await fixture('wrong-calls.ts');
    const lines = text.split('\n');
    const expected: number[] = [];
    // Each directive becomes a bare comment, so lines keep their numbers; the line after it must fail.
    const stripped = lines.map((line, index) => {
      if (!line.trim().startsWith('// @ts-expect-error')) return line;
      expected.push(index + 2);
      return line.replace('@ts-expect-error', 'expected error:');
    });
    expect(expected.length).toBeGreaterThanOrEqual(12);
    await writeFile(path.join(project, 'wrong.ts'), stripped.join('\n'));
    const result = await compile(project, 'wrong.ts');
    expect(result.code).not.toBe(0);
    const failing = [...result.output.matchAll(/^wrong\.ts\((\d+),\d+\): error TS\d+/gm)].map((m) => Number(m[1]));
    expect([...new Set(failing)].sort((a, b) => a - b)).toEqual(expected);
  });

  it('drives a real server through a room with every method, from plain Node', async () => {
    const result = await runWalk(project, NAME, svc.base, ADMIN_TOKEN);
    expect(result).toMatchObject({ winners: ['yes', 'later'], ok: true, errors: [] });
    expect(result.called).toHaveLength(31);
  });
});
