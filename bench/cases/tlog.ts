/**
 * The transparency log under load (docs/transparency-log.md): 10,000 receipts across 1,000 rooms
 * (each room: ten decisions, each sealed at once by its one member's choice), then how long after
 * the last write the published checkpoint covers them all, every receipt's inclusion proof from
 * `/outcome` verified against its checkpoint, a consistency proof from every earlier checkpoint to
 * the last, and the time to serve one proof over HTTP (p50/p99, beside a trivial GET on the same
 * server measured interleaved with it: the floor) and to build one in process.
 * Sizes: BENCH_TLOG_ROOMS (1000) × BENCH_TLOG_DECISIONS (10).
 */
import { rm } from 'node:fs/promises';
import { verifyCheckpoint, verifyConsistency, verifyReceiptInLog } from '../../src/client/tlog.js';
import { startBenchService } from '../bench-service.js';
import type { BenchCase, BenchRow } from '../table.js';

const ROOMS = Number(process.env.BENCH_TLOG_ROOMS ?? 1000);
const DECISIONS = Number(process.env.BENCH_TLOG_DECISIONS ?? 10);
const PARALLEL = 20;
const PROBES = 2000;
/** Requests of each kind sent before measuring (connection, JIT). */
const WARMUP = 100;

type Api = (method: string, path: string, token?: string, body?: unknown) => Promise<Record<string, any>>;

/** 503s (back-pressure on a loaded machine) are retried as a client would, after a short pause, and counted. */
const retried = { count: 0 };

function apiFor(base: string): Api {
  return async (method, path, token, body) => {
    for (;;) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (response.status !== 503) return (await response.json()) as Record<string, any>;
      await response.arrayBuffer();
      retried.count++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
}

/** One persistent room whose decisions seal as soon as its one member chooses. */
async function roomOfReceipts(api: Api, index: number): Promise<{ slug: string; token: string }> {
  const room = await api('POST', '/api/rooms', undefined, {
    about: `tlog bench room ${index}`,
    config: { type: 'persistent', early_close: true, settle_window: 0 },
  });
  for (let d = 0; d < DECISIONS; d++) {
    const asked = await api('POST', `/api/rooms/${room.slug}/ask`, room.creator_token, {
      question: `Decision ${d}?`,
      options: ['keep', 'change'],
    });
    if (asked.error) throw new Error(`ask failed: ${JSON.stringify(asked.error)}`);
    const chosen = await api('POST', `/api/rooms/${room.slug}/choose`, room.creator_token, { choice: 'keep' });
    if (chosen.error) throw new Error(`choose failed: ${JSON.stringify(chosen.error)}`);
  }
  return { slug: room.slug, token: room.creator_token };
}

function percentiles(latencies: number[]): { p50: number; p99: number } {
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
  return { p50: at(50), p99: at(99) };
}

export const tlog: BenchCase = {
  id: 'tlog',
  async run() {
    const { service, base, dataDir } = await startBenchService();
    const api = apiFor(base);
    const rows: BenchRow[] = [];
    try {
      const auditLog = (await api('GET', '/.well-known/svc.json')).audit_log;
      const key = auditLog.verifier_key as string;
      const total = ROOMS * DECISIONS;
      const rooms: { slug: string; token: string }[] = [];
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          while (next < ROOMS) rooms.push(await roomOfReceipts(api, next++));
        }),
      );
      const lastWrite = performance.now();
      const writeSeconds = (lastWrite - started) / 1000;

      // How long until the published checkpoint covers every receipt.
      let latest = await verifyCheckpoint(await (await fetch(`${base}/log/checkpoint`)).text(), key);
      while (latest.size < total) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        latest = await verifyCheckpoint(await (await fetch(`${base}/log/checkpoint`)).text(), key);
        if (performance.now() - lastWrite > 60_000) throw new Error(`the log covers ${latest.size} of ${total}`);
      }
      const coveredAfter = (performance.now() - lastWrite) / 1000;
      rows.push({
        case: `tlog: ${total} receipts in ${ROOMS} rooms`,
        rps: Math.round((ROOMS * (1 + 2 * DECISIONS)) / writeSeconds),
        note: `checkpoint covers all ${latest.size} receipts ${coveredAfter.toFixed(2)} s after the last write (${coveredAfter <= 5 ? 'within' : 'OVER'} the 5 s bound; ${retried.count} writes retried after a 503)`,
      });

      // Every receipt's proof in /outcome verifies against its (signed) checkpoint.
      let verified = 0;
      let longest = 0;
      for (const room of rooms) {
        const outcome = await api('GET', `/api/rooms/${room.slug}/outcome`, room.token);
        for (const row of outcome.decisions as Record<string, any>[]) {
          await verifyReceiptInLog(row.receipt_jws, row.transparency_log, key, auditLog.position_keys ?? []);
          longest = Math.max(longest, row.transparency_log.inclusion_proof.length);
          verified++;
        }
      }
      if (verified !== total) throw new Error(`verified ${verified} receipts, expected ${total}`);
      // O(log n): an inclusion proof has at most ⌈log2 n⌉ hashes.
      if (longest > Math.ceil(Math.log2(latest.size))) throw new Error(`an inclusion proof of ${longest} hashes`);

      // A consistency proof from every earlier checkpoint verifies against the latest.
      const sizes: number[] = [];
      let after: number | null = -1;
      while (after !== null) {
        const page = await api('GET', `/log/checkpoints${after < 0 ? '' : `?after=${after}`}`);
        sizes.push(...(page.sizes as number[]));
        after = page.next_after as number | null;
      }
      const earlierSizes = sizes.filter((s) => s < latest.size);
      let longestConsistency = 0;
      for (const size of earlierSizes) {
        const earlier = await verifyCheckpoint(await (await fetch(`${base}/log/checkpoint/${size}`)).text(), key);
        const proof = await api('GET', `/log/proof/consistency?first=${size}&second=${latest.size}`);
        if (!verifyConsistency(earlier, latest, proof.consistency_proof)) throw new Error(`checkpoint ${size} forks`);
        longestConsistency = Math.max(longestConsistency, proof.consistency_proof.length);
      }

      // Serving one proof over HTTP, beside the floor of this server in the same run: a trivial GET
      // (/healthz) through the same hooks. The three are interleaved request by request, so the
      // machine's load falls on all of them alike; one sequential keep-alive client, body read whole.
      const kinds = {
        floor: () => '/healthz',
        inclusion: (i: number) => `/log/proof/inclusion?index=${(i * 7919) % latest.size}&size=${latest.size}`,
        consistency: (i: number) =>
          `/log/proof/consistency?first=${earlierSizes[(i * 31) % earlierSizes.length] ?? 0}&second=${latest.size}`,
      };
      const latencies = { floor: [] as number[], inclusion: [] as number[], consistency: [] as number[] };
      for (let i = -WARMUP; i < PROBES; i++) {
        for (const kind of ['floor', 'inclusion', 'consistency'] as const) {
          const t = performance.now();
          const response = await fetch(`${base}${kinds[kind](Math.abs(i))}`);
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`${kinds[kind](i)} answered ${response.status}`);
          if (i >= 0) latencies[kind].push(performance.now() - t);
        }
      }
      const floor = percentiles(latencies.floor);
      const ms = (value: number) => `${value.toFixed(3)} ms`;
      rows.push({
        case: 'tlog: GET /healthz (floor)',
        ...floor,
        note: `p50 ${ms(floor.p50)}, p99 ${ms(floor.p99)}: the same server, the same client, interleaved with the proofs`,
      });

      // In process: the cost of building one proof, without HTTP.
      const log = service.services.tlog!;
      const t1 = performance.now();
      for (let i = 0; i < PROBES; i++) await log.inclusion((i * 7919) % latest.size, latest.size);
      const inclusionMicros = ((performance.now() - t1) * 1000) / PROBES;
      const t2 = performance.now();
      for (let i = 0; i < PROBES; i++)
        await log.consistency(earlierSizes[(i * 31) % earlierSizes.length] ?? 0, latest.size);
      const consistencyMicros = ((performance.now() - t2) * 1000) / PROBES;

      const proofRow = (kind: 'inclusion' | 'consistency', facts: string, micros: number): BenchRow => {
        const at = percentiles(latencies[kind]);
        return {
          case: `tlog: GET ${kind} proof`,
          ...at,
          ratio: at.p50 / floor.p50,
          note: `p50 ${ms(at.p50)} (${at.p50 <= 1 ? '≤' : '>'} 1 ms), p99 ${ms(at.p99)}; ratio = p50 / floor p50, p99 / floor p99 = ${(at.p99 / floor.p99).toFixed(2)}; ${facts}; built in process in ${micros.toFixed(1)} µs`,
        };
      };
      rows.push(
        proofRow(
          'inclusion',
          `all ${verified} /outcome proofs verify; longest ${longest} hashes, log2 n = ${Math.log2(latest.size).toFixed(1)}`,
          inclusionMicros,
        ),
        proofRow(
          'consistency',
          `${earlierSizes.length} earlier checkpoints all consistent with the last; longest ${longestConsistency} hashes`,
          consistencyMicros,
        ),
      );
    } finally {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    }
    return rows;
  },
};
