/**
 * The transparency log at the scale of the acceptance (docs/transparency-log.md): 10,000 leaves
 * from 1,000 rooms, queued in bursts as the rooms' commits would queue them (the trigger's table,
 * written directly: signing 10,000 genuine receipts over HTTP takes minutes here, which
 * `BENCH_ONLY=tlog npm run bench` does). The published checkpoint covers them all within 5 s of
 * the last write plus what labelling them costs on this machine (each leaf carries a VRF position
 * label: the floor is measured in the same run, so a slower integrator fails and a slower machine
 * does not; the rate itself is the bench's); every leaf's inclusion proof served over HTTP verifies and has at most ⌈log2 n⌉
 * hashes; a consistency proof from every earlier checkpoint to the last verifies.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint, verifyConsistency, verifyInclusion } from '../../src/client/tlog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { positionAlpha } from '../../src/tlog/position.js';
import { parseReceiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { decodeEntryBundle, encodeTileIndex } from '../../src/tlog/tiles.js';
import { call, type RunningService, startService } from '../support/service.js';

const ROOMS = 1000;
const PER_ROOM = 10;
const BURSTS = 50;

/**
 * A stand-in for a receipt's compact JWS: the integrator reads only the payload's room_id and
 * sequence (for the position label) and hashes the bytes.
 */
const jwsOf = (room: number, sequence: number) =>
  `eyJhbGciOiJFZERTQSIsImtpZCI6InNjYWxlIn0.${Buffer.from(
    JSON.stringify({ svc: { room_id: `https://scale.example/r/scale${room}`, sequence } }),
  ).toString('base64url')}.c2ln`;

/**
 * What labelling all the leaves costs this process, in ms: 200 entries built the way the integrator
 * builds them (the label's VRF output and the leaf), timed here, scaled to every leaf.
 */
function labellingMs(positions: { entry(jws: string): unknown }): number {
  const sample = 200;
  const began = performance.now();
  for (let i = 0; i < sample; i++) positions.entry(jwsOf(ROOMS + i, 1));
  return ((performance.now() - began) / sample) * ROOMS * PER_ROOM;
}

describe('the transparency log with 10,000 leaves from 1,000 rooms', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let key: string;

  beforeAll(async () => {
    svc = await startService({ clock });
    // The first checkpoint (the empty tree) now, not whenever the integrator's timer falls.
    await svc.service.integrator.integrateNow();
    key = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log.verifier_key;
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('covers every leaf within 5 s plus its labelling; every inclusion and every consistency proof verifies', async () => {
    const positions = svc.service.services.positions;
    if (!positions) throw new Error('the service labels no positions');
    const coverBound = 5000 + 1.5 * labellingMs(positions);
    const latestCheckpoint = async () => verifyCheckpoint((await call(svc.base, 'GET', '/log/checkpoint')).text, key);
    const start = (await latestCheckpoint()).size;
    const jwss: string[] = [];
    // Commit order: each room's receipts in chain order, rooms interleaved, written in bursts
    // while the integrator runs as it does in service.
    for (let sequence = 1; sequence <= PER_ROOM; sequence++) {
      for (let room = 0; room < ROOMS; room++) jwss.push(jwsOf(room, sequence));
    }
    const db = new Database(path.join(svc.dataDir, 'conclave.db'));
    const enqueue = db.prepare('INSERT INTO tlog_queue (slug, sequence, jws, receipt_hash) VALUES (?, ?, ?, ?)');
    const burst = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        enqueue.run(`scale${i % ROOMS}`, Math.floor(i / ROOMS) + 1, jwss[i]!, `sha256:scale-${i}`);
      }
    });
    const perBurst = jwss.length / BURSTS;
    for (let b = 0; b < BURSTS; b++) {
      burst(b * perBurst, (b + 1) * perBurst);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    db.close();
    const lastWrite = Date.now();
    const total = start + jwss.length;
    let latest = await latestCheckpoint();
    while (latest.size < total) {
      expect(Date.now() - lastWrite).toBeLessThan(coverBound);
      await new Promise((resolve) => setTimeout(resolve, 20));
      latest = await latestCheckpoint();
    }
    const coveredAfter = Date.now() - lastWrite;
    expect(coveredAfter).toBeLessThan(coverBound);
    expect(latest.size).toBe(total);
    // Each leaf, read from the entry bundles, is its receipt's commitment under the current
    // position key; a sample's labels are checked against the full VRF (a proof costs a few ms).
    const positionKey = positions.current();
    const leaves: string[] = [];
    for (let index = 0; index * 256 < latest.size; index++) {
      const width = Math.min(256, latest.size - index * 256);
      const bundle = await fetch(
        `${svc.base}/log/tile/entries/${encodeTileIndex(index)}${width === 256 ? '' : `.p/${width}`}`,
      );
      leaves.push(
        ...decodeEntryBundle(new Uint8Array(await bundle.arrayBuffer())).map((e) => new TextDecoder().decode(e)),
      );
    }
    leaves.splice(0, start);
    expect(leaves.length).toBe(jwss.length);
    jwss.forEach((jws, i) => {
      const leaf = parseReceiptLeaf(new TextEncoder().encode(leaves[i] as string));
      expect(leaf?.keyId).toBe(positionKey.keyId);
      expect(Buffer.from(leaf?.commitment ?? []).toString('hex')).toBe(createHash('sha256').update(jws).digest('hex'));
      if (i % 200 === 0) {
        const { output } = positionKey.prove(
          positionAlpha(`https://scale.example/r/scale${i % ROOMS}`, Math.floor(i / ROOMS) + 1),
        );
        expect(Buffer.from(leaf?.label ?? []).toString('hex')).toBe(Buffer.from(output.slice(0, 32)).toString('hex'));
      }
    });

    // Every leaf's inclusion proof, over HTTP, a few requests at a time.
    const bound = Math.ceil(Math.log2(latest.size));
    let longest = 0;
    let next = 0;
    const failed: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < leaves.length) {
          const i = next++;
          const answer = await fetch(`${svc.base}/log/proof/inclusion?index=${start + i}&size=${latest.size}`);
          const proof = ((await answer.json()) as { inclusion_proof: string[] }).inclusion_proof;
          longest = Math.max(longest, proof.length);
          if (!verifyInclusion(leaves[i]!, start + i, proof, latest)) failed.push(start + i);
        }
      }),
    );
    expect(failed).toEqual([]);
    expect(longest).toBeLessThanOrEqual(bound);

    // A consistency proof from every earlier checkpoint to the last.
    const sizes: number[] = [];
    for (let after: number | null = -1; after !== null; ) {
      const page = (await call(svc.base, 'GET', `/log/checkpoints${after < 0 ? '' : `?after=${after}`}`)).body;
      sizes.push(...(page.sizes as number[]));
      after = page.next_after as number | null;
    }
    const earlier = sizes.filter((size) => size < latest.size);
    expect(earlier.length).toBeGreaterThan(1);
    for (const size of earlier) {
      const checkpoint = await verifyCheckpoint((await call(svc.base, 'GET', `/log/checkpoint/${size}`)).text, key);
      const proof = (await call(svc.base, 'GET', `/log/proof/consistency?first=${size}&second=${latest.size}`)).body
        .consistency_proof as string[];
      expect([size, verifyConsistency(checkpoint, latest, proof)]).toEqual([size, true]);
      expect(proof.length).toBeLessThanOrEqual(bound + 1);
    }
    console.log(
      `tlog scale: ${leaves.length} leaves covered ${coveredAfter} ms after the last write; ${leaves.length} inclusion proofs (longest ${longest}) and ${earlier.length} consistency proofs verified`,
    );
  }, 180_000);
});
