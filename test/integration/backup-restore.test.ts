/**
 * `conclave backup` while a service process is being written to, `conclave restore` into a fresh data
 * directory, and a service started on it: every write acknowledged before the backup started is
 * there, every receipt chain verifies against the restored JWKS, and the backup holds no credential
 * in the clear (docs/operations-backup.md).
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { verifyRoomReceiptChain } from '../../src/client/index.js';
import { roomSignedFor } from '../support/signed-room.js';
import { SEALED_BODY_PREFIX } from '../../src/store/common.js';
import { runCli } from '../cli/run-cli.js';
import { type ChildService, spawnService } from '../support/child-service.js';
import { call } from '../support/service.js';

interface Written {
  slug: string;
  token: string;
  /** Unique texts posted, each with the time its write was acknowledged. */
  messages: { text: string; ackedAt: number }[];
  createdAt: number;
}

/** Seals at once when everyone has chosen, so receipts are signed while the load runs. */
const QUICK_ROOM = { early_close: true, settle_window: 0, voting_window: 60 };

describe('backup and restore of the embedded store under load', () => {
  let dir: string;
  let live: ChildService | null = null;
  let restored: ChildService | null = null;
  afterAll(async () => {
    await live?.stop();
    await restored?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps every write acknowledged before the backup began, and every chain verifies', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-backup-'));
    live = await spawnService({
      LOG_LEVEL: 'silent',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREATE_PER_HOUR: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
    });
    const rooms: Written[] = [];
    let stop = false;
    let counter = 0;
    const writer = async (lane: number) => {
      while (!stop) {
        // With an Idempotency-Key the response (creator token included) is kept for replay, sealed.
        const created = await call(live!.base, 'POST', '/api/rooms', {
          body: { question: `Lane ${lane}: which?`, options: ['a', 'b'], config: QUICK_ROOM },
          headers: { 'idempotency-key': `lane-${lane}-${counter++}` },
        });
        expect(created.status).toBe(200);
        const room: Written = {
          slug: created.body.slug,
          token: created.body.creator_token,
          messages: [],
          createdAt: Date.now(),
        };
        rooms.push(room);
        for (let i = 0; i < 3 && !stop; i++) {
          const text = `message ${lane}-${counter++}`;
          const posted = await call(live!.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
            token: room.token,
            body: { body: text },
          });
          expect(posted.status).toBe(200);
          room.messages.push({ text, ackedAt: Date.now() });
        }
        // The creator is the only voter: choosing seals the decision and signs a receipt.
        await call(live!.base, 'POST', `/api/rooms/${room.slug}/choose`, { token: room.token, body: { choice: 'a' } });
      }
    };
    let failure: unknown = null;
    const lanes = [0, 1, 2].map((lane) =>
      writer(lane).catch((error) => {
        failure = error;
        stop = true;
      }),
    );
    while (rooms.length < 10 && !stop) await new Promise((r) => setTimeout(r, 50));

    const backupFile = path.join(dir, 'conclave.backup');
    const env = {
      ...process.env,
      DATA_DIR: live.dataDir,
      LOG_LEVEL: 'silent',
      CONCLAVE_CONFIG: path.join(dir, 'cli.json'),
    };
    const backupStarted = Date.now();
    const backup = await runCli(env, '--json', 'backup', backupFile);
    const writtenDuringBackup = rooms.flatMap((r) => r.messages).filter((m) => m.ackedAt > backupStarted).length;
    stop = true;
    await Promise.all(lanes);
    if (failure) throw failure;
    expect(backup.code, backup.stderr).toBe(0);
    expect((await stat(backupFile)).mode & 0o777).toBe(0o600);
    // No credential in the clear: tokens are stored hashed, replayed responses sealed as they were.
    const bytes = await readFile(backupFile);
    const copy = new Database(backupFile, { readonly: true });
    const sealed = copy.prepare<[], { body: string }>('SELECT body FROM idempotency').all();
    copy.close();
    expect(sealed.length).toBeGreaterThan(0);
    for (const { body } of sealed) expect(body.startsWith(SEALED_BODY_PREFIX)).toBe(true);
    for (const room of rooms) expect(bytes.includes(Buffer.from(room.token))).toBe(false);

    const target = path.join(dir, 'restored');
    const restore = await runCli({ ...env, DATA_DIR: target }, 'restore', backupFile);
    expect(restore.code, restore.stderr).toBe(0);
    // A second restore into the now non-empty directory is refused, not merged.
    const again = await runCli({ ...env, DATA_DIR: target }, 'restore', backupFile);
    expect(again.code).toBe(6);
    expect(again.stderr).toContain('not empty');
    expect((await stat(path.join(target, 'conclave.db'))).mode & 0o777).toBe(0o600);

    restored = await spawnService({ LOG_LEVEL: 'silent' }, { dataDir: target });
    const jwks = (await call(restored.base, 'GET', '/.well-known/jwks.json')).body;
    expect(jwks).toEqual((await call(live.base, 'GET', '/.well-known/jwks.json')).body);
    let checkedMessages = 0;
    let receipts = 0;
    for (const room of rooms.filter((r) => r.createdAt < backupStarted)) {
      const events = await call(restored.base, 'GET', `/api/rooms/${room.slug}/events?limit=100`, {
        token: room.token,
      });
      expect(events.status, room.slug).toBe(200);
      const text = JSON.stringify(events.body);
      for (const message of room.messages.filter((m) => m.ackedAt < backupStarted)) {
        expect(text, `${room.slug}: ${message.text}`).toContain(message.text);
        checkedMessages++;
      }
      const outcome = await call(restored.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token });
      const report = await verifyRoomReceiptChain(outcome.body, { jwks, room: roomSignedFor(outcome.body) });
      expect(report.ok, `${room.slug}: ${report.errors.join('; ')}`).toBe(true);
      receipts += report.receipts.length;
    }
    expect(checkedMessages).toBeGreaterThanOrEqual(20);
    // The load really ran while the backup was being taken.
    expect(writtenDuringBackup).toBeGreaterThan(0);
    expect(receipts).toBeGreaterThan(3);
  }, 120_000);
});
