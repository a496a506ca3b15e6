/**
 * The package as a user gets it: `npm pack` of the build, `npm install <tarball>` in a fresh
 * project, then `import { ConclaveClient, verifyRoomReceiptChain } from 'conclave/client'` in plain
 * Node drives a real server through a room, its types compile, and the `conclave` bin runs.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../support/built.js';
import { type RunningService, startService } from '../support/service.js';
import { runWalk } from './walk-script.js';

const exec = promisify(execFile);
const ADMIN_TOKEN = 'pack-test-admin-token-0123456789abcdef';

const TYPED = `
import { ConclaveClient, ConclaveError, type ChainReport } from 'conclave/client';
const client = new ConclaveClient({ baseUrl: 'http://127.0.0.1:1' });
export async function run(): Promise<string> {
  try {
    const body = await client.choose({ slug: 'abc', choice: 'yes' });
    return String(body.status);
  } catch (error) {
    return error instanceof ConclaveError ? error.code : 'network';
  }
}
export const empty: ChainReport = { ok: false, signatures_checked: false, room_checked: false, room_source: null, chain_ok: true, room: null, decisions: [], conclusion: null, receipts: [], errors: [] };
`;

describe('the packed package', () => {
  let svc: RunningService;
  let project: string;
  beforeAll(async () => {
    svc = await startService({ env: { CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    project = await mkdtemp(path.join(tmpdir(), 'conclave-pack-'));
    // The build `prepack` runs (`npm run build`) is the one the suite's global set-up made of these
    // sources (test/support/built.ts): packed as it stands rather than built a second time.
    expect(JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')).scripts.prepack).toBe(
      'npm run build',
    );
    await ensureBuilt();
    await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', project], { cwd: repoRoot, timeout: 180_000 });
    const tarball = (await readdir(project)).find((file) => file.endsWith('.tgz'))!;
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'user-project', type: 'module', private: true }),
    );
    // From the npm cache the install already populated; no install scripts (the client needs no native module).
    await exec(
      'npm',
      [
        'install',
        path.join(project, tarball),
        '--prefer-offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      { cwd: project, timeout: 240_000 },
    );
  }, 420_000);
  afterAll(async () => {
    await svc?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('imports conclave/client in plain Node and drives a real server through a room with every method', async () => {
    const result = await runWalk(project, 'conclave/client', svc.base, ADMIN_TOKEN);
    expect(result).toMatchObject({ winners: ['yes', 'later'], ok: true, errors: [] });
    expect(result.called).toHaveLength(31);
  });

  it('ships types that compile against conclave/client', async () => {
    await writeFile(path.join(project, 'typed.ts'), TYPED);
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    await exec(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--lib',
        'es2023,dom',
        'typed.ts',
      ],
      { cwd: project },
    );
  });

  it('installs the conclave command', async () => {
    const bin = path.join(project, 'node_modules', '.bin', 'conclave');
    const { stdout } = await exec(bin, ['--help'], { cwd: project });
    expect(stdout).toContain('verify');
    const failed = await exec(bin, ['room', 'read', 'nosuchroom', '--base', svc.base], { cwd: project }).catch(
      (e) => e,
    );
    expect(failed.code).toBe(3);
  });
});
