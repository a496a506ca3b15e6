/**
 * Cost per write against a room's history: one persistent room of 50 members, history built across
 * many decisions (500 messages each, every one decided); then, at each size, `discuss`, `choose`
 * and the agent-view read from one sequential client, and the stored snapshot's size.
 * Sizes: BENCH_HISTORY (default 100,10000,100000).
 */
import { rm } from 'node:fs/promises';
import { createBenchRoom, startBenchService } from '../bench-service.js';
import type { BenchCase, BenchRow } from '../table.js';

const AGENTS = 50;
const PER_DECISION = 500;
const PROBES = 200;

type Api = (method: string, path: string, token?: string, body?: unknown) => Promise<Record<string, any>>;

function apiFor(base: string): Api {
  return async (method, path, token, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return (await response.json()) as Record<string, any>;
  };
}

/** Grows the room's discussion to `target` messages, a decision at a time, each decided before the next. */
async function growTo(api: Api, slug: string, tokens: string[], have: number, target: number): Promise<number> {
  let messages = have;
  while (messages < target) {
    const asked = await api('POST', `/api/rooms/${slug}/ask`, tokens[0], {
      question: `Decision after ${messages} messages?`,
      options: ['keep', 'change'],
    });
    const seq = asked.decision?.seq ?? asked.seq;
    const count = Math.min(PER_DECISION, target - messages);
    await Promise.all(
      tokens.map(async (token, agent) => {
        for (let i = agent; i < count; i += tokens.length) {
          const said = await api('POST', `/api/rooms/${slug}/discuss`, token, {
            body: `message ${messages + i}`,
            decision: seq,
          });
          if (said.error) throw new Error(`growing the history failed: ${JSON.stringify(said.error)}`);
        }
      }),
    );
    messages += count;
    await Promise.all(tokens.map((token) => api('POST', `/api/rooms/${slug}/choose`, token, { choice: 'keep' })));
  }
  return messages;
}

/** Sequential calls; an answer carrying an error envelope counts in the row's errors. */
async function probe(name: string, run: () => Promise<Record<string, any>>): Promise<BenchRow> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  for (let i = 0; i < PROBES; i++) {
    const t = performance.now();
    if ((await run()).error !== undefined) errors++;
    latencies.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
  const rps = Math.round(PROBES / ((performance.now() - started) / 1000));
  return { case: name, rps, p50: at(50), p99: at(99), errors };
}

export const history: BenchCase = {
  id: 'history',
  async run() {
    const sizes = (process.env.BENCH_HISTORY ?? '100,10000,100000').split(',').map(Number);
    const { service, base, dataDir } = await startBenchService();
    const api = apiFor(base);
    const rows: BenchRow[] = [];
    try {
      const room = await createBenchRoom(base, {
        type: 'persistent',
        early_close: true,
        settle_window: 0,
        max_deliberation_messages_per_participant: 500,
        max_total_deliberation_messages: 5000,
      });
      const tokens = [room.token];
      for (let i = 1; i < AGENTS; i++) {
        tokens.push((await api('POST', `/api/rooms/${room.slug}/join`, undefined, {})).participant_token);
      }
      await Promise.all(
        tokens.map((token) => api('POST', `/api/rooms/${room.slug}/choose`, token, { choice: 'alpha' })),
      );
      let messages = 0;
      let first: BenchRow[] | null = null;
      for (const size of sizes) {
        messages = await growTo(api, room.slug, tokens, messages, size);
        const open = await api('POST', `/api/rooms/${room.slug}/ask`, tokens[0], {
          question: `Probe at ${size} messages?`,
          options: ['keep', 'change'],
        });
        const seq = open.decision?.seq ?? open.seq;
        let n = 0;
        const discuss = await probe(`discuss, ${size} messages of history`, () =>
          api('POST', `/api/rooms/${room.slug}/discuss`, tokens[n++ % AGENTS], { body: 'probe', decision: seq }),
        );
        let m = 0;
        const choose = await probe(`choose, ${size} messages of history`, () =>
          api('POST', `/api/rooms/${room.slug}/choose`, tokens[0], {
            choice: m++ % 2 ? 'keep' : 'change',
            decision: seq,
          }),
        );
        const read = await probe(`agent view read, ${size} messages`, () =>
          api('GET', `/api/rooms/${room.slug}`, tokens[0]),
        );
        await Promise.all(
          tokens.map((token) => api('POST', `/api/rooms/${room.slug}/choose`, token, { choice: 'keep' })),
        );
        const stored = await service.services.store.load(room.slug);
        const snapshotKiB = Buffer.byteLength(stored?.snapshot ?? '') / 1024;
        const ratioToFirst = (row: BenchRow, i: number) =>
          first ? { ...row, ratio: (row.p50 ?? 0) / (first[i]!.p50 ?? 1) } : row;
        const measured = [discuss, choose, read];
        first ??= measured;
        rows.push(
          { ...ratioToFirst(discuss, 0), note: `snapshot ${snapshotKiB.toFixed(0)} KiB; ratio = p50 vs ${sizes[0]}` },
          { ...ratioToFirst(choose, 1), note: `ratio = p50 vs ${sizes[0]}` },
          { ...ratioToFirst(read, 2), note: `ratio = p50 vs ${sizes[0]}` },
        );
      }
      return rows;
    } finally {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
