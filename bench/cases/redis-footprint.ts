/**
 * A room's whole Redis footprint beside the history the API serves for it: 10 members, 5 decided
 * decisions, 45 messages. Footprint = MEMORY USAGE summed over the room's keys; served history =
 * the bytes of its /events pages plus its receipts' JWS. Then bytes per room, live and concluded
 * (compacted), over BENCH_ROOMS copies (10,000 by default) of a typical closed room
 * (bench/redis-room-bytes.ts): a concluded room must take at most an eighth of the same room live.
 */
import { rm } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../test/support/redis-server.js';
import { createBenchRoom, startBenchService } from '../bench-service.js';
import { measureRoomBytes } from '../redis-room-bytes.js';
import type { BenchCase } from '../table.js';

const MEMBERS = 10;
const DECISIONS = 5;
const MESSAGES = 45;
const ROOMS = Number(process.env.BENCH_ROOMS ?? 10_000);

export const redisFootprint: BenchCase = {
  id: 'redis-footprint',
  async run() {
    const server = await startRedisServer();
    if (server === null) return [{ case: 'redis bytes per room', note: 'skipped: no redis-server' }];
    const { service, base, dataDir } = await startBenchService({ STORE: 'redis', REDIS_URL: server.url });
    const redis = new Redis(server.url);
    try {
      const api = async (method: string, path: string, token?: string, body?: unknown) => {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        return { text: await response.text(), status: response.status };
      };
      const json = async (method: string, path: string, token?: string, body?: unknown) =>
        JSON.parse((await api(method, path, token, body)).text) as Record<string, any>;
      const room = await createBenchRoom(base, { type: 'persistent', early_close: true, settle_window: 0 });
      const tokens = [room.token];
      for (let i = 1; i < MEMBERS; i++) {
        tokens.push(
          (await json('POST', `/api/rooms/${room.slug}/join`, undefined, { display_name: `member ${i}` }))
            .participant_token,
        );
      }
      let said = 0;
      for (let d = 0; d < DECISIONS; d++) {
        if (d > 0)
          await json('POST', `/api/rooms/${room.slug}/ask`, tokens[0], {
            question: `Decision ${d + 1}?`,
            options: ['alpha', 'beta'],
          });
        for (let i = 0; i < MESSAGES / DECISIONS; i++) {
          await json('POST', `/api/rooms/${room.slug}/discuss`, tokens[said % MEMBERS], {
            body: `message number ${said}`,
          });
          said++;
        }
        for (const token of tokens) await api('POST', `/api/rooms/${room.slug}/choose`, token, { choice: 'alpha' });
      }
      // Served history: every /events page and every receipt's JWS.
      let served = 0;
      for (let after = 0; ; ) {
        const page = await api('GET', `/api/rooms/${room.slug}/events?since_seq=${after}&limit=100`, tokens[0]);
        served += Buffer.byteLength(page.text);
        const body = JSON.parse(page.text) as { events: { seq: number }[]; has_more: boolean };
        if (!body.has_more || body.events.length === 0) break;
        after = body.events.at(-1)!.seq;
      }
      const outcome = await json('GET', `/api/rooms/${room.slug}/outcome`, tokens[0]);
      for (const d of outcome.decisions as { receipt_jws: string | null }[]) served += d.receipt_jws?.length ?? 0;
      let footprint = 0;
      const keys = await redis.keys(`*{${room.slug}}*`);
      for (const key of keys) {
        const bytes = (await redis.memory('USAGE', key)) ?? 0;
        if (process.env.BENCH_VERBOSE) console.log(key, bytes, await redis.type(key));
        footprint += bytes;
      }
      const bytes = await measureRoomBytes(server.url, { cluster: false, rooms: ROOMS });
      const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
      return [
        {
          case: `redis bytes per room (${MEMBERS} members, ${DECISIONS} decided, ${MESSAGES} messages)`,
          ratio: footprint / served,
          note: `${(footprint / 1024).toFixed(1)} KiB in ${keys.length} keys vs ${(served / 1024).toFixed(1)} KiB of served history (ratio = footprint / served)`,
        },
        {
          case: `redis bytes per live room (${ROOMS} closed rooms, expanded)`,
          note: `${kib(bytes.liveBytesPerRoom)} used_memory per room; MEMORY USAGE of one: ${kib(bytes.liveUsage)}`,
        },
        {
          case: `redis bytes per concluded room (${ROOMS} compacted)`,
          ratio: bytes.concludedBytesPerRoom / bytes.liveBytesPerRoom,
          note: `${kib(bytes.concludedBytesPerRoom)} used_memory per room; MEMORY USAGE of one: ${kib(bytes.concludedUsage)}; ratio = concluded / live (floor 1/8 = 0.125); compaction ${(bytes.compactMs / ROOMS).toFixed(1)} ms per room`,
        },
      ];
    } finally {
      redis.disconnect();
      await service.close();
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
