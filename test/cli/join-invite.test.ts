/**
 * `conclave room join --invite` redeems the invite: a private room admits the seat under the
 * invite's label, and joining again with it recovers the same seat.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type RunningService, startService } from '../support/service.js';
import { type Run, runCli } from './run-cli.js';

describe('conclave room join --invite', () => {
  let svc: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  const cli = (...args: string[]): Promise<Run> => runCli(env, ...args);

  beforeAll(async () => {
    svc = await startService();
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-cli-invite-'));
    env = {
      ...process.env,
      CONCLAVE_CONFIG: path.join(dir, 'config.json'),
      CONCLAVE_URL: svc.base,
      LOG_LEVEL: 'silent',
    };
  });
  afterAll(async () => {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the invited seat in a private room', async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Private?', options: ['a', 'b'], config: { visibility: 'private' } },
    });
    const { slug, creator_token: creator } = created.body;
    const invite = await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, {
      token: creator,
      body: { label: 'carol' },
    });
    const joined = await cli('--json', 'room', 'join', slug, '--invite', invite.body.invite_token);
    expect(joined.stderr).toBe('');
    expect(joined.code).toBe(0);
    expect(JSON.parse(joined.stdout)).toMatchObject({ display_name: 'carol', participant_token: '[saved]' });
    const saved = JSON.parse(await readFile(env.CONCLAVE_CONFIG!, 'utf8')).rooms[slug].participant.token as string;
    const view = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: saved });
    expect(view.status).toBe(200);
    // A participant token is saved for this room now: taking it again is an explicit --replace.
    const again = await cli('--json', 'room', 'join', slug, '--invite', invite.body.invite_token, '--replace');
    expect(JSON.parse(again.stdout)).toMatchObject({ display_name: 'carol', recovered: true });
  });
});
