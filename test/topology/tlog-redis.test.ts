/**
 * One transparency log for three processes on Redis, with the integrator killed (SIGKILL) every
 * few seconds under write load: every acknowledged receipt ends up in the log exactly once, and
 * every checkpoint any process served during the run is a prefix of the final tree (no two
 * checkpoints of one size differ, each is consistent with the end).
 */
import { parseReceiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint } from '../../src/client/tlog.js';
import { hashesEqual, leafHash } from '../../src/tlog/merkle.js';
import { fromBase64 } from '../../src/tlog/note.js';
import { decodeEntryBundle, TILE_WIDTH, tilePath } from '../../src/tlog/tiles.js';
import { MerkleTree } from '../../src/tlog/tree.js';
import { startRedisServer } from '../support/redis-server.js';
import { type Fleet, startFleet } from '../support/topology.js';

const RUN_MS = Number(process.env.TLOG_TOPOLOGY_MS ?? 24_000);
const KILL_EVERY_MS = 4_000;
const PUBLIC_BASE_URL = 'http://conclave.test';

const redis = await startRedisServer({ aof: true });

async function fetchText(url: string): Promise<{ status: number; text: string } | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, text: await response.text() };
  } catch {
    return null; // a killed process
  }
}

/** A bundle, retried like a mirror would while the loaded machine answers 503 (back-pressure). */
async function fetchBundle(url: string): Promise<Uint8Array> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url);
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (response.status === 200) return bytes;
    if (response.status !== 503 || attempt >= 20) {
      throw new Error(`${url}: HTTP ${response.status} ${new TextDecoder().decode(bytes.slice(0, 300))}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.skipIf(!redis)('one transparency log for three processes on Redis, integrator killed -9', () => {
  let fleet: Fleet;
  const bases = () => fleet.ports.map((port) => `http://127.0.0.1:${port}`);

  beforeAll(async () => {
    fleet = await startFleet(3, {
      STORE: 'redis',
      REDIS_URL: redis?.url ?? '',
      REDIS_KEY_PREFIX: `tlog-${randomUUID().slice(0, 8)}:`,
      CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
      PUBLIC_BASE_URL,
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
      RATE_LIMIT_CREATE_PER_HOUR: '0',
      RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '0',
      RATE_LIMIT_ISSUER_PER_MIN: '0',
      RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '0',
      RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '0',
      LOG_LEVEL: 'error',
    });
  }, 120_000);
  afterAll(async () => {
    await fleet?.stop();
    await redis?.stop();
  });

  it('sequences every acknowledged receipt once, with no fork', async () => {
    const key = JSON.parse((await fetchText(`${bases()[0]}/.well-known/svc.json`))!.text).audit_log.verifier_key;
    const acknowledged = new Set<string>();
    const seen = new Map<number, string>();
    const forks: string[] = [];
    let integratorKills = 0;
    const end = Date.now() + RUN_MS;

    const writer = async (w: number) => {
      for (let n = 0; Date.now() < end; n++) {
        const base = bases()[(w + n) % 3]!;
        try {
          const created = await fetch(`${base}/api/rooms`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ about: `load ${w}/${n}` }),
            signal: AbortSignal.timeout(5_000),
          });
          if (!created.ok) continue;
          const room = (await created.json()) as { slug: string; creator_token: string };
          const closed = await fetch(`${base}/api/rooms/${room.slug}/close`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${room.creator_token}` },
            body: '{}',
            signal: AbortSignal.timeout(5_000),
          });
          if (closed.status === 200) acknowledged.add(((await closed.json()) as { receipt_hash: string }).receipt_hash);
        } catch {
          // the process was killed mid-request: not acknowledged
        }
      }
    };

    const sampler = async () => {
      while (Date.now() < end) {
        for (const base of bases()) {
          const answer = await fetchText(`${base}/log/checkpoint`);
          if (answer?.status !== 200) continue;
          const checkpoint = await verifyCheckpoint(answer.text, key);
          const before = seen.get(checkpoint.size);
          if (before !== undefined && before !== checkpoint.root) forks.push(`size ${checkpoint.size}`);
          seen.set(checkpoint.size, checkpoint.root);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };

    const restarts: Promise<void>[] = [];
    const killer = async () => {
      while (Date.now() + KILL_EVERY_MS < end) {
        await new Promise((resolve) => setTimeout(resolve, KILL_EVERY_MS));
        for (let i = 0; i < 3; i++) {
          const metrics = await fetchText(`${bases()[i]}/metrics`);
          if (!metrics?.text.includes('conclave_tlog_integrator 1')) continue;
          fleet.kill(i);
          integratorKills++;
          // Restarted in the background: the next kill finds whoever took the lease over.
          restarts.push(fleet.restart(i));
          break;
        }
      }
    };

    await Promise.all([writer(0), writer(1), writer(2), sampler(), killer()]);
    await Promise.all(restarts);
    expect(integratorKills).toBeGreaterThanOrEqual(3);
    expect(acknowledged.size).toBeGreaterThan(20);

    // Everything acknowledged is sequenced soon after the load stops.
    const base = bases()[0]!;
    let final = await verifyCheckpoint((await fetchText(`${base}/log/checkpoint`))!.text, key);
    const entries: string[] = [];
    const deadline = Date.now() + 15_000;
    for (;;) {
      entries.length = 0;
      for (let index = 0; index * TILE_WIDTH < final.size; index++) {
        const width = Math.min(TILE_WIDTH, final.size - index * TILE_WIDTH);
        const bytes = await fetchBundle(`${base}/log/${tilePath({ level: 'entries', index, width })}`);
        const bundle = decodeEntryBundle(bytes);
        entries.push(...bundle.map((entry) => new TextDecoder().decode(entry)));
      }
      // Each leaf commits to one receipt by its SHA-256 (docs/transparency-log.md, The leaf).
      const hashes = new Set(
        entries.map(
          (leaf) =>
            `sha256:${Buffer.from(parseReceiptLeaf(new TextEncoder().encode(leaf))?.commitment ?? []).toString('hex')}`,
        ),
      );
      const missing = [...acknowledged].filter((hash) => !hashes.has(hash));
      if (missing.length === 0 || Date.now() > deadline) {
        expect(missing).toEqual([]);
        expect(hashes.size).toBe(entries.length); // no receipt twice
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      final = await verifyCheckpoint((await fetchText(`${base}/log/checkpoint`))!.text, key);
    }

    // No fork: every checkpoint served during the run is the final tree's prefix.
    expect(forks).toEqual([]);
    const tree = new MerkleTree();
    tree.append(entries.map((jws) => leafHash(new TextEncoder().encode(jws))));
    expect(hashesEqual(tree.root(), fromBase64(final.root))).toBe(true);
    for (const [size, root] of seen) {
      if (size <= final.size) expect([size, hashesEqual(tree.root(size), fromBase64(root))]).toEqual([size, true]);
    }
    expect(seen.size).toBeGreaterThan(3);
  }, 180_000);
});
