/** The start-up warm-up (src/warm-up.ts): runs its calls against a throwaway service and leaves nothing behind. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createService } from '../../src/service.js';
import { warmUp } from '../../src/warm-up.js';
import { WarmUpClient } from '../../src/warm-up-client.js';

const warmupDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('conclave-warmup-'));

describe('start-up warm-up', () => {
  it('serves its calls on a throwaway service, agents visits included, and deletes its directory', async () => {
    const before = new Set(await warmupDirs());
    // 120 calls: ten agent visits (a whole room, sealed by the last visitor's choice) and a hot room's burst.
    const report = await warmUp(120);
    expect(report.turns).toBe(120);
    expect(report.ms).toBeGreaterThan(0);
    expect(report.failures).toBe(0);
    expect((await warmupDirs()).filter((name) => !before.has(name))).toEqual([]);
  }, 60_000);

  it('counts an answer that is not what a working service gives as a failure, in both eras', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-warmup-test-'));
    const service = await createService(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WARMUP_TURNS: '0' }));
    try {
      const client = new WarmUpClient(service.app);
      const room = await client.rest('POST', '/api/rooms', undefined, { question: 'Which one?', options: ['a', 'b'] });
      expect(client.failures).toBe(0);
      const joined = await client.tool('2026-07-28', 1, 'join_room', { slug: room.slug, display_name: 'one' });
      expect(joined?.participant_token).toEqual(expect.any(String));
      expect(await client.tool('2025-11-25', 2, 'choose', { slug: room.slug, token: 'not-a-token', choice: 'a' })).toBe(
        null,
      );
      expect(client.failures).toBe(1);
      await client.rest('GET', '/api/rooms/no-such-room');
      expect(client.failures).toBe(2);
      client.expect(await client.exchange('GET', '/mcp', { accept: 'text/event-stream' }), 200);
      expect(client.failures).toBe(3);
    } finally {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
