/**
 * Credentials at rest (docs/architecture.md, Credentials): an attacker who reads the data directory
 * (SQLite files, WAL included) or the Redis keyspace finds no usable credential, even though every
 * create, invite and join below was sent with an Idempotency-Key and is kept for replay. A replay
 * with the same key from the same client still returns the same response; the same key from another
 * client address never hands the credential over. The SQLite files are the service account's alone.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/auth/secrets.js';
import { canonicalJson } from '../../src/receipts/index.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'correct horse battery staple';
const ATTACKER = '198.51.100.66';
const CLIENT = '192.0.2.10';

interface Minted {
  secrets: string[];
  slug: string;
  creatorToken: string;
  inviteKey: string;
  inviteBody: unknown;
  invite: Awaited<ReturnType<typeof call>>;
}

function from(address: string, key: string): Record<string, string> {
  return { 'x-forwarded-for': address, 'idempotency-key': key };
}

/** Creates, invites and joins with Idempotency-Keys; replays each once; returns every secret it saw. */
async function mintCredentials(base: string): Promise<Minted> {
  const secrets: string[] = [PASSWORD];
  const createKey = `create-${randomUUID()}`;
  const createBody = { question: 'Where?', options: ['here', 'there'], visibility: 'private', password: PASSWORD };
  const created = await call(base, 'POST', '/api/rooms', { body: createBody, headers: from(CLIENT, createKey) });
  expect(created.status).toBe(200);
  const { slug, creator_token: creatorToken } = created.body;
  secrets.push(creatorToken);

  const inviteKey = `invite-${randomUUID()}`;
  const inviteBody = { label: 'carol' };
  const invite = await call(base, 'POST', `/api/rooms/${slug}/invites`, {
    token: creatorToken,
    body: inviteBody,
    headers: from(CLIENT, inviteKey),
  });
  expect(invite.status).toBe(200);
  secrets.push(invite.body.invite_token);

  const joinKey = `join-${randomUUID()}`;
  const joinBody = { invite: invite.body.invite_token, display_name: 'carol' };
  const joined = await call(base, 'POST', `/api/rooms/${slug}/join`, {
    body: joinBody,
    headers: from(CLIENT, joinKey),
  });
  expect(joined.status).toBe(200);
  secrets.push(joined.body.participant_token);

  const pwKey = `pw-${randomUUID()}`;
  const pwBody = { password: PASSWORD, display_name: 'dave' };
  const pwJoined = await call(base, 'POST', `/api/rooms/${slug}/join`, { body: pwBody, headers: from(CLIENT, pwKey) });
  expect(pwJoined.status).toBe(200);
  secrets.push(pwJoined.body.participant_token);

  // The rightful client replays: the same response, byte for byte, marked as a replay.
  for (const [url, token, body, key, first] of [
    ['/api/rooms', undefined, createBody, createKey, created],
    [`/api/rooms/${slug}/invites`, creatorToken, inviteBody, inviteKey, invite],
    [`/api/rooms/${slug}/join`, undefined, joinBody, joinKey, joined],
    [`/api/rooms/${slug}/join`, undefined, pwBody, pwKey, pwJoined],
  ] as const) {
    const again = await call(base, 'POST', url, { token, body, headers: from(CLIENT, key) });
    expect(again.status, url).toBe(first.status);
    expect(again.text, url).toBe(first.text);
    expect(again.headers.get('idempotent-replayed'), url).toBe('true');
  }
  return { secrets, slug, creatorToken, inviteKey, inviteBody, invite };
}

/** The same credential and key from another client address: the stored credential is not handed over. */
async function replayFromElsewhere(base: string, minted: Minted): Promise<void> {
  const stolen = await call(base, 'POST', `/api/rooms/${minted.slug}/invites`, {
    token: minted.creatorToken,
    body: minted.inviteBody,
    headers: from(ATTACKER, minted.inviteKey),
  });
  expect(stolen.status).toBe(409);
  expect(stolen.body.error.code).toBe('idempotency.conflict');
  expect(stolen.text).not.toContain(minted.invite.body.invite_token);
  // The rightful client still gets its replay afterwards.
  const again = await call(base, 'POST', `/api/rooms/${minted.slug}/invites`, {
    token: minted.creatorToken,
    body: minted.inviteBody,
    headers: from(CLIENT, minted.inviteKey),
  });
  expect(again.text).toBe(minted.invite.text);

  // A webhook registration replays its signing secret: only to the address that registered it.
  const hookKey = `hook-${randomUUID()}`;
  const hookBody = { url: 'http://127.0.0.1:9/hook' };
  const url = `/api/rooms/${minted.slug}/webhooks`;
  const hook = await call(base, 'POST', url, {
    token: minted.creatorToken,
    body: hookBody,
    headers: from(CLIENT, hookKey),
  });
  expect(hook.status).toBe(200);
  const replay = await call(base, 'POST', url, {
    token: minted.creatorToken,
    body: hookBody,
    headers: from(CLIENT, hookKey),
  });
  expect(replay.body.signing_secret).toBe(hook.body.signing_secret);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  const elsewhere = await call(base, 'POST', url, {
    token: minted.creatorToken,
    body: hookBody,
    headers: from(ATTACKER, hookKey),
  });
  expect(elsewhere.status).toBe(409);
  expect(elsewhere.body.error.code).toBe('idempotency.conflict');
  expect(elsewhere.text).not.toContain(hook.body.signing_secret);
  const otherBody = await call(base, 'POST', url, {
    token: minted.creatorToken,
    body: { url: 'http://127.0.0.1:9/other' },
    headers: from(CLIENT, hookKey),
  });
  expect(otherBody.status).toBe(409);
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else out.push(full);
  }
  return out;
}

/** Every secret that appears in any byte of any file of the directory, with the file. */
async function secretsInFiles(dir: string, secrets: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of await filesUnder(dir)) {
    const bytes = await readFile(file);
    for (const secret of secrets) if (bytes.includes(Buffer.from(secret, 'utf8'))) found.push(`${file}: ${secret}`);
  }
  return found;
}

describe('on SQLite', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { TRUST_PROXY: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('keeps no raw token, invite or password in any byte of the data directory, and replays stay exact', async () => {
    const minted = await mintCredentials(svc.base);
    // While running: the WAL holds the latest pages.
    expect(await secretsInFiles(svc.dataDir, minted.secrets)).toEqual([]);
    await replayFromElsewhere(svc.base, minted);
    const files = await filesUnder(svc.dataDir);
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    for (const file of files) expect(((await stat(file)).mode & 0o777).toString(8), file).toBe('600');
    expect(((await stat(svc.dataDir)).mode & 0o777).toString(8)).toBe('700');
  });
});

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

/** Every value of every key, read by type, plus each key's DUMP and its name. */
async function redisBytes(url: string): Promise<Buffer[]> {
  const client = new Redis(url);
  const out: Buffer[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scanBuffer(cursor, 'COUNT', 1000);
      cursor = next.toString();
      for (const key of keys) {
        out.push(key);
        const dumped = await client.dumpBuffer(key);
        if (dumped) out.push(dumped);
        const type = await client.type(key);
        if (type === 'string') out.push((await client.getBuffer(key))!);
        else if (type === 'hash') {
          const fields = await client.hgetallBuffer(key);
          out.push(...Object.keys(fields).map((k) => Buffer.from(k)), ...Object.values(fields));
        } else if (type === 'list') out.push(...(await client.lrangeBuffer(key, 0, -1)));
        else if (type === 'set') out.push(...(await client.smembersBuffer(key)));
        else if (type === 'zset') out.push(...(await client.zrangeBuffer(key, 0, -1)));
        else if (type === 'stream') out.push(Buffer.from(JSON.stringify(await client.xrange(key, '-', '+'))));
      }
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return out;
}

describe.skipIf(redis === null)('on Redis', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({
      env: {
        TRUST_PROXY: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        STORE: 'redis',
        REDIS_URL: redis!.url,
        REDIS_KEY_PREFIX: `adv-${randomUUID().slice(0, 8)}:`,
      },
    });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('keeps no raw token, invite or password in any key or value of the keyspace, and replays stay exact', async () => {
    const minted = await mintCredentials(svc.base);
    const values = await redisBytes(redis!.url);
    expect(values.length).toBeGreaterThan(10);
    const found = minted.secrets.filter((secret) => values.some((v) => v.includes(Buffer.from(secret, 'utf8'))));
    expect(found).toEqual([]);
    await replayFromElsewhere(svc.base, minted);
  });
});

/**
 * A record as the version before sealing stored it: the raw response body (creator_token included)
 * and the raw request fingerprint, under the same scope hash. Written with the same statements that
 * version used (SQLite row, Redis SET of the JSON record).
 */
function rawRecord(key: string, body: unknown, rawToken: string) {
  const scope = `-|${hashSecret(`ip:127.0.0.1\nPOST /api/rooms\n${key}`)}`;
  const response = { ok: true, slug: 'oldroom', creator_token: rawToken };
  return {
    scope,
    fingerprint: canonicalJson(body),
    status: 200,
    body: JSON.stringify(response),
    created_at: Date.now(),
  };
}

describe('idempotency records stored raw by the previous version', () => {
  const body = { question: 'Old?', options: ['a', 'b'] };
  const rawToken = `t_${randomUUID()}raw`;
  const key = `old-${randomUUID()}`;

  it('on SQLite: are purged at start, leave no byte behind, and a retry with their key runs afresh', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-raw-idem-'));
    try {
      const first = await startService({ dataDir });
      await first.stop();
      const file = path.join(dataDir, 'conclave.db');
      const db = new Database(file);
      const record = rawRecord(key, body, rawToken);
      db.prepare('INSERT INTO idempotency (scope, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?)').run(
        record.scope,
        record.fingerprint,
        record.status,
        record.body,
        record.created_at,
      );
      db.close();
      // The previous version left its files world-readable.
      await chmod(file, 0o644);
      await chmod(dataDir, 0o755);
      expect((await secretsInFiles(dataDir, [rawToken])).length).toBeGreaterThan(0);

      const svc = await startService({ dataDir });
      try {
        expect(await secretsInFiles(dataDir, [rawToken])).toEqual([]);
        for (const f of await filesUnder(dataDir)) expect(((await stat(f)).mode & 0o777).toString(8), f).toBe('600');
        expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe('700');
        const retry = await call(svc.base, 'POST', '/api/rooms', { body, headers: { 'idempotency-key': key } });
        expect(retry.status).toBe(200);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
        expect(retry.body.creator_token).not.toBe(rawToken);
        // And the fresh record replays as usual.
        const again = await call(svc.base, 'POST', '/api/rooms', { body, headers: { 'idempotency-key': key } });
        expect(again.text).toBe(retry.text);
      } finally {
        await svc.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it.skipIf(redis === null)('on Redis: are purged at start and a retry with their key runs afresh', async () => {
    const prefix = `raw-${randomUUID().slice(0, 8)}:`;
    const env = { STORE: 'redis', REDIS_URL: redis!.url, REDIS_KEY_PREFIX: prefix };
    const record = rawRecord(key, body, rawToken);
    const client = new Redis(redis!.url);
    try {
      await client.set(`${prefix}idem:${record.scope}`, JSON.stringify(record), 'PX', 3_600_000);
      const svc = await startService({ env });
      try {
        expect(await client.exists(`${prefix}idem:${record.scope}`)).toBe(0);
        const retry = await call(svc.base, 'POST', '/api/rooms', { body, headers: { 'idempotency-key': key } });
        expect(retry.status).toBe(200);
        expect(retry.headers.get('idempotent-replayed')).toBeNull();
        expect(retry.body.creator_token).not.toBe(rawToken);
        const values = await redisBytes(redis!.url);
        expect(values.some((v) => v.includes(Buffer.from(rawToken)))).toBe(false);
      } finally {
        await svc.stop();
      }
    } finally {
      client.disconnect();
    }
  });
});
