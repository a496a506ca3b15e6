/**
 * A member's scan of the transparency log for its room (src/client/room-log.ts), over logs built
 * here with the same modules the integrator uses (position keys, VRF labels, commitment leaves):
 * an honest log, a fork (two different receipts at one position label), a receipt never shown (a
 * leaf at the unused position), a receipt the log lacks, and positions bodies a lying service
 * could send (a bad proof, a label of another room, a key left out, a gap).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  auditRoomLog,
  fetchLogEntries,
  type LogEntry,
  type LogPositions,
  monitorRoomInLog,
} from '../../../src/client/room-log.js';
import { LogVerificationError, type PositionKey, verifyReceiptInLog } from '../../../src/client/tlog.js';
import { leafHash } from '../../../src/tlog/merkle.js';
import { toBase64 } from '../../../src/tlog/note.js';
import { NoteSigner } from '../../../src/tlog/note-signer.js';
import { positionAlpha, positionKeyFor, positionLabel } from '../../../src/tlog/position.js';
import { receiptLeaf } from '../../../src/tlog/receipt-leaf.js';
import { concatHashes, encodeEntryBundle, tilePath } from '../../../src/tlog/tiles.js';
import { MerkleTree } from '../../../src/tlog/tree.js';
import type { VrfKey } from '../../../src/tlog/vrf.js';
import { signingKeyFromSeed } from '../../../src/receipts/keys.js';

const ROOM = 'https://rooms.example/r/k7mq2xw9pa';
const OTHER_ROOM = 'https://rooms.example/r/z9z9z9z9z9';
const CURRENT = positionKeyFor(new Uint8Array(32).fill(1));
const RETIRED = positionKeyFor(new Uint8Array(32).fill(2));

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const publicKeyOf = (key: VrfKey): PositionKey => ({ key_id: key.keyId, public_key: b64url(key.publicKey) });
const hashOf = (jws: string) => `sha256:${createHash('sha256').update(jws).digest('hex')}`;

/** A compact JWS whose payload signs a room and a chain position (the signature is not the monitor's concern). */
function receipt(roomId: string, sequence: number, variant = 'a'): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'EdDSA' })}.${part({ svc: { room_id: roomId, sequence, variant } })}.${b64url(new Uint8Array(64).fill(7))}`;
}

function labelFor(key: VrfKey, roomId: string, sequence: number) {
  const { proof, output } = key.prove(positionAlpha(roomId, sequence));
  return { key_id: key.keyId, label: toBase64(positionLabel(output)), proof: b64url(proof) };
}

/** The leaf the integrator writes for a receipt: labelled with the room and position the JWS signs. */
function leafFor(jws: string, key: VrfKey): Uint8Array {
  const { room_id: roomId, sequence } = JSON.parse(
    Buffer.from(jws.split('.')[1] as string, 'base64url').toString(),
  ).svc;
  return receiptLeaf(jws, key.keyId, positionLabel(key.prove(positionAlpha(roomId, sequence)).output));
}

/** The member endpoint's body as the service builds it: positions 1..n with leaf indexes, then n+1. */
function positionsBody(receipts: string[], leafIndexes: (number | null)[], keys: VrfKey[] = [CURRENT]): LogPositions {
  const rows = receipts.map((jws, i) => ({
    sequence: i + 1,
    receipt_hash: hashOf(jws),
    leaf_index: leafIndexes[i] ?? null,
    labels: keys.map((key) => labelFor(key, ROOM, i + 1)),
  }));
  rows.push({
    sequence: receipts.length + 1,
    receipt_hash: null as unknown as string,
    leaf_index: null,
    labels: keys.map((key) => labelFor(key, ROOM, receipts.length + 1)),
  });
  return { room_id: ROOM, log_origin: 'rooms.example/log/v2', positions: rows };
}

const entriesOf = (leaves: Uint8Array[]): LogEntry[] => leaves.map((data, index) => ({ index, data }));

// The room's chain: three receipts, logged among other rooms' leaves and one frozen-log style JWS.
const chain = [receipt(ROOM, 1), receipt(ROOM, 2), receipt(ROOM, 3)];
const noise = [
  leafFor(receipt(OTHER_ROOM, 1), CURRENT),
  new TextEncoder().encode(receipt(OTHER_ROOM, 2)),
  leafFor(receipt(OTHER_ROOM, 2), CURRENT),
];
const honest = [
  noise[0],
  leafFor(chain[0] as string, CURRENT),
  noise[1],
  leafFor(chain[1] as string, CURRENT),
  noise[2],
  leafFor(chain[2] as string, CURRENT),
] as Uint8Array[];
const honestIndexes = [1, 3, 5];

describe('monitorRoomInLog', () => {
  it('finds every leaf of the room and nothing else in an honest log', async () => {
    const report = await monitorRoomInLog({
      positions: positionsBody(chain, honestIndexes),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf(honest),
      receipts: chain,
    });
    expect(report).toMatchObject({ ok: true, leaves_found: 3, tree_size: 6, forks: [], missing: [], unseen: [] });
    expect(report.positions).toEqual([
      { sequence: 1, leaf_indexes: [1], commitments: [hashOf(chain[0] as string)] },
      { sequence: 2, leaf_indexes: [3], commitments: [hashOf(chain[1] as string)] },
      { sequence: 3, leaf_indexes: [5], commitments: [hashOf(chain[2] as string)] },
      { sequence: 4, leaf_indexes: [], commitments: [] },
    ]);
  });

  it('reads entries from an async iterable, as a mirror streams them', async () => {
    async function* stream() {
      for (const entry of entriesOf(honest)) yield entry;
    }
    const report = await monitorRoomInLog({
      positions: positionsBody(chain, honestIndexes),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: stream(),
    });
    expect(report.ok).toBe(true);
    expect(report.leaves_found).toBe(3);
  });

  it('reports a fork: a second, different receipt logged at one position', async () => {
    const forged = receipt(ROOM, 2, 'b');
    const log = [...honest, leafFor(forged, CURRENT)];
    const report = await monitorRoomInLog({
      positions: positionsBody(chain, honestIndexes),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf(log),
      receipts: chain,
    });
    expect(report.ok).toBe(false);
    expect(report.forks).toEqual([
      { sequence: 2, leaf_indexes: [3, 6], commitments: [hashOf(chain[1] as string), hashOf(forged)] },
    ]);
    expect(report.missing).toEqual([]);
  });

  it('reports the member’s receipt missing when the log holds only another one at its position', async () => {
    const shownToOthers = receipt(ROOM, 2, 'b');
    const log = [...honest];
    log[3] = leafFor(shownToOthers, CURRENT);
    const report = await monitorRoomInLog({
      positions: positionsBody(chain, honestIndexes),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf(log),
      receipts: chain,
    });
    expect(report.ok).toBe(false);
    expect(report.forks).toEqual([]);
    expect(report.missing).toEqual([
      {
        sequence: 2,
        receipt_hash: hashOf(chain[1] as string),
        reason: 'the log holds another receipt at position 2 (leaf 3)',
      },
    ]);
  });

  it('reports a receipt never shown: a leaf at the next, unused position', async () => {
    const hidden = receipt(ROOM, 4);
    const report = await monitorRoomInLog({
      positions: positionsBody(chain, honestIndexes),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf([...honest, leafFor(hidden, CURRENT)]),
      receipts: chain,
    });
    expect(report.ok).toBe(false);
    expect(report.unseen).toEqual([{ sequence: 4, leaf_indexes: [6] }]);
  });

  it('reports a receipt the log does not hold, and an endpoint leaf index that does not hold it', async () => {
    const withoutThird = honest.slice(0, 5);
    const missing = await monitorRoomInLog({
      positions: positionsBody(chain, [1, 3, null]),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf(withoutThird),
    });
    expect(missing.missing).toEqual([
      {
        sequence: 3,
        receipt_hash: hashOf(chain[2] as string),
        reason: "no leaf of the log carries position 3's label",
      },
    ]);
    const misplaced = await monitorRoomInLog({
      positions: positionsBody(chain, [1, 4, 5]),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf(honest),
    });
    expect(misplaced.missing).toEqual([
      {
        sequence: 2,
        receipt_hash: hashOf(chain[1] as string),
        reason: 'the member endpoint places it at leaf 4, which does not hold it',
      },
    ]);
  });

  it('reports a receipt the member holds beyond the positions the endpoint admits', async () => {
    const report = await monitorRoomInLog({
      positions: positionsBody(chain.slice(0, 2), honestIndexes.slice(0, 2)),
      positionKeys: [publicKeyOf(CURRENT)],
      entries: entriesOf(honest),
      receipts: chain,
    });
    expect(report.ok).toBe(false);
    // The third receipt sits at what the endpoint calls the unused position: it is unseen there too.
    expect(report.unseen).toEqual([{ sequence: 3, leaf_indexes: [5] }]);
    expect(report.missing[0]).toMatchObject({ sequence: 3, receipt_hash: hashOf(chain[2] as string) });
  });

  it('scans under every position key: a fork made under a retired key is found', async () => {
    const forged = receipt(ROOM, 1, 'b');
    const log = [...honest, leafFor(forged, RETIRED)];
    const report = await monitorRoomInLog({
      positions: positionsBody(chain, honestIndexes, [CURRENT, RETIRED]),
      positionKeys: [publicKeyOf(CURRENT), publicKeyOf(RETIRED)],
      entries: entriesOf(log),
    });
    expect(report.forks).toEqual([
      { sequence: 1, leaf_indexes: [1, 6], commitments: [hashOf(chain[0] as string), hashOf(forged)] },
    ]);
  });

  describe('refuses a positions body it cannot trust', () => {
    const keys = [publicKeyOf(CURRENT)];
    const run = (positions: LogPositions, positionKeys = keys) =>
      monitorRoomInLog({ positions, positionKeys, entries: entriesOf(honest) });

    it('a label whose proof does not verify', async () => {
      const body = positionsBody(chain, honestIndexes);
      const label = body.positions[1]?.labels[0] as { proof: string };
      const proof = Buffer.from(label.proof, 'base64url');
      proof[50] = (proof[50] as number) ^ 1;
      label.proof = b64url(proof);
      await expect(run(body)).rejects.toThrow(/does not verify under position key/);
    });

    it('another room’s label and proof, passed off as this room’s (it would hide the room’s real leaves)', async () => {
      const body = positionsBody(chain, honestIndexes);
      (body.positions[1] as { labels: unknown[] }).labels = [labelFor(CURRENT, OTHER_ROOM, 2)];
      await expect(run(body)).rejects.toThrow(LogVerificationError);
    });

    it('a label that is not its proof’s output', async () => {
      const body = positionsBody(chain, honestIndexes);
      const good = labelFor(CURRENT, ROOM, 2);
      (body.positions[1] as { labels: unknown[] }).labels = [{ ...good, label: labelFor(CURRENT, ROOM, 3).label }];
      await expect(run(body)).rejects.toThrow(/not its proof's output/);
    });

    it('a position key left without a label (a fork under it would go unseen)', async () => {
      const body = positionsBody(chain, honestIndexes, [CURRENT]);
      await expect(run(body, [publicKeyOf(CURRENT), publicKeyOf(RETIRED)])).rejects.toThrow(
        new RegExp(`no label under position key ${RETIRED.keyId}`),
      );
    });

    it('a label by a key discovery does not list', async () => {
      await expect(run(positionsBody(chain, honestIndexes, [RETIRED]))).rejects.toThrow(/does not list/);
    });

    it('a discovery key whose id is not its own', async () => {
      await expect(
        run(positionsBody(chain, honestIndexes), [{ ...publicKeyOf(RETIRED), key_id: CURRENT.keyId }]),
      ).rejects.toThrow(/the id is not the key's/);
    });

    it('a gap in the positions, or no unused position', async () => {
      const gap = positionsBody(chain, honestIndexes);
      gap.positions.splice(1, 1);
      await expect(run(gap)).rejects.toThrow(/skip or repeat/);
      const noUnused = positionsBody(chain, honestIndexes);
      noUnused.positions.pop();
      await expect(run(noUnused)).rejects.toThrow(/unused one/);
    });

    it('receipts of another room', async () => {
      await expect(
        monitorRoomInLog({
          positions: positionsBody(chain, honestIndexes),
          positionKeys: keys,
          entries: entriesOf(honest),
          receipts: [receipt(OTHER_ROOM, 1)],
        }),
      ).rejects.toThrow(/of https:\/\/rooms.example\/r\/z9z9z9z9z9/);
    });
  });
});

describe('verifyReceiptInLog with the commitment leaf', () => {
  const signer = new NoteSigner('rooms.example/log/v2', signingKeyFromSeed(new Uint8Array(32).fill(9)));
  const tree = new MerkleTree();
  tree.append(honest.map(leafHash));
  const checkpoint = signer.signCheckpoint(tree.size, tree.root());
  const field = (index: number, sequence: number, key = CURRENT, roomId = ROOM) => ({
    index,
    tree_size: tree.size,
    checkpoint,
    inclusion_proof: tree.inclusion(index, tree.size).map(toBase64),
    position: labelFor(key, roomId, sequence),
  });

  it('rebuilds the leaf from the JWS and the proven label, and proves it in the signed tree', async () => {
    const verified = await verifyReceiptInLog(chain[1] as string, field(3, 2), signer.verifierKey, [
      publicKeyOf(CURRENT),
    ]);
    expect(verified.size).toBe(6);
  });

  it('refuses a label proven for another position than the receipt signs', async () => {
    await expect(
      verifyReceiptInLog(chain[1] as string, field(3, 3), signer.verifierKey, [publicKeyOf(CURRENT)]),
    ).rejects.toMatchObject({ failure: 'position' });
  });

  it('refuses another receipt at the leaf (the commitment differs)', async () => {
    await expect(
      verifyReceiptInLog(receipt(ROOM, 2, 'b'), field(3, 2), signer.verifierKey, [publicKeyOf(CURRENT)]),
    ).rejects.toMatchObject({ failure: 'inclusion' });
  });

  it('refuses a row without a position label', async () => {
    const { position: _dropped, ...old } = field(3, 2);
    await expect(
      verifyReceiptInLog(chain[1] as string, old as never, signer.verifierKey, [publicKeyOf(CURRENT)]),
    ).rejects.toMatchObject({ failure: 'position' });
  });
});

describe('fetchLogEntries', () => {
  const tree = new MerkleTree();
  tree.append(honest.map(leafHash));
  const root = toBase64(tree.root());
  const serve = (bundle: Uint8Array[]) =>
    (async (url: string | URL | Request) => {
      const path = String(url).replace('http://log.test/log/', '');
      if (path === tilePath({ level: 'entries', index: 0, width: 6 })) return new Response(encodeEntryBundle(bundle));
      // The log's own hash tile: the genuine leaf hashes its checkpoints were computed from.
      if (path === tilePath({ level: 0, index: 0, width: 6 })) {
        return new Response(concatHashes(tree.hashesAt(0, 0, 6)));
      }
      return new Response('no', { status: 404 });
    }) as typeof fetch;

  it('yields every leaf of the checkpoint when the entries hash to its root', async () => {
    const got: LogEntry[] = [];
    for await (const entry of fetchLogEntries(serve(honest), 'http://log.test/log', { size: 6, root })) got.push(entry);
    expect(got.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('throws when an entry was swapped behind the checkpoint (a view the tree does not sign)', async () => {
    const swapped = [...honest];
    swapped[3] = leafFor(receipt(ROOM, 2, 'b'), CURRENT);
    const run = async () => {
      for await (const _ of fetchLogEntries(serve(swapped), 'http://log.test/log', { size: 6, root })) {
      }
    };
    await expect(run()).rejects.toThrow(
      'leaf 3: the entry the log serves is not the tree its checkpoint of size 6 signs',
    );
  });
});

describe('auditRoomLog', () => {
  const signer = new NoteSigner('rooms.example/log/v2', signingKeyFromSeed(new Uint8Array(32).fill(9)));
  const tree = new MerkleTree();
  tree.append(honest.map(leafHash));
  const checkpoint = signer.signCheckpoint(tree.size, tree.root());
  const service = (positions: LogPositions) =>
    (async (url: string | URL | Request) => {
      const path = new URL(String(url)).pathname;
      const json = (body: unknown) => new Response(JSON.stringify(body));
      if (path === '/.well-known/svc.json') {
        return json({ audit_log: { verifier_key: signer.verifierKey, position_keys: [publicKeyOf(CURRENT)] } });
      }
      if (path === '/api/rooms/k7mq2xw9pa/log-positions') return json(positions);
      if (path === '/api/rooms/k7mq2xw9pa/outcome') return json({ decisions: [] });
      if (path === '/log/checkpoint') return new Response(checkpoint);
      if (path === `/log/${tilePath({ level: 'entries', index: 0, width: 6 })}`)
        return new Response(encodeEntryBundle(honest));
      return new Response('{}', { status: 404 });
    }) as typeof fetch;

  it('audits the room over HTTP', async () => {
    const audit = await auditRoomLog({
      baseUrl: 'https://rooms.example',
      slug: 'k7mq2xw9pa',
      fetch: service(positionsBody(chain, honestIndexes)),
      waitMs: 0,
    });
    expect(audit).toMatchObject({ ok: true, leaves_found: 3, tree_size: 6 });
  });

  it('refuses positions of another room (its labels would hide this room’s leaves)', async () => {
    const other = { ...positionsBody([], []), room_id: OTHER_ROOM };
    other.positions = [
      { sequence: 1, receipt_hash: null, leaf_index: null, labels: [labelFor(CURRENT, OTHER_ROOM, 1)] },
    ];
    await expect(
      auditRoomLog({ baseUrl: 'https://rooms.example', slug: 'k7mq2xw9pa', fetch: service(other), waitMs: 0 }),
    ).rejects.toThrow(`the positions are of ${OTHER_ROOM}, not of room k7mq2xw9pa`);
  });
});
