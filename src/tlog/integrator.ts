/**
 * Sequencing: moves committed receipts from the store's queue into the log, one integrator at a
 * time (docs/transparency-log.md). Whoever holds the log lease (a store lock, fenced: every write
 * checks the token) appends a batch of leaves with every tile they complete, then signs and
 * publishes the checkpoint of the new size. A process that loses the lease, or whose write fails,
 * forgets its in-memory tree and starts again from the store when it next holds the lease, so it
 * never builds on a state the store does not have.
 *
 * No fork: an append succeeds only on top of exactly the stored size, tiles only grow, the
 * checkpoint of a size is a deterministic function of the stored leaves (Ed25519 is deterministic),
 * and the store refuses a second, different note for a published size.
 *
 * Each leaf is a commitment to one receipt under a VRF position label (position-labels.ts), never
 * the receipt itself. Before the first queued receipt, the holder back-fills the live log with the
 * frozen v1 log's receipts in their leaf order, so the order of every receipt logged so far is kept.
 */
import type { RoomLock, RoomStore } from '../store/port.js';
import { LOG_LEASE_SLUG, type LogEntry, type QueuedReceipt } from '../store/tlog-port.js';
import { backfillOrder } from './commit-order.js';
import { leafHash } from './merkle.js';
import { parseCheckpoint } from './note.js';
import type { NoteSigner } from './note-signer.js';
import { concatHashes, TILE_HEIGHT } from './tiles.js';
import { MerkleTree } from './tree.js';
import type { Witnesses } from './witness.js';

export interface IntegratorOptions {
  /** How often the lease holder looks at the queue. */
  intervalMs: number;
  /**
   * Lease lifetime. The holder renews it once a third of it has passed (LEASE_RENEWAL_SHARE); a
   * process without it tries to take it every sixth (LEASE_ATTEMPT_SHARE), so a dead integrator's
   * successor takes over after at most seven sixths of this.
   */
  leaseMs: number;
  /** How often the holder looks for receipts the queue missed (Redis). */
  sweepMs: number;
  /** Receipts per append. */
  batchSize: number;
  /** The clock the lease's age is read from (tests inject one); Date.now by default. */
  now?: () => number;
}

export const DEFAULT_INTEGRATOR_OPTIONS: IntegratorOptions = {
  intervalMs: 200,
  leaseMs: 3000,
  sweepMs: 30_000,
  batchSize: 2000,
};

/**
 * The share of the lease after which its holder renews it. Renewing on every pass (every 200 ms)
 * cost each idle process five store writes a second, each of them an fsync on SQLite and a script
 * call on Redis; a third leaves two more renewals before the lease could lapse, as the room locks'
 * renewal does (runtime/held-lock.ts). Every write is fenced on the lease token either way, so how
 * often it is renewed is a matter of liveness, never of correctness.
 */
const LEASE_RENEWAL_SHARE = 1 / 3;
/**
 * The share of the lease after which a process without it tries again. A try is a store write (a
 * lock attempt); trying on every pass cost each process five a second for a lease that can only
 * change hands once it lapses.
 */
const LEASE_ATTEMPT_SHARE = 1 / 6;

const encoder = new TextEncoder();

/** Leaves labelled per turn of the event loop (about 15 ms of CPU). */
const LABELS_PER_TURN = 32;

/** Turns a receipt into its leaf: the commitment under the current position key (PositionLabels.entry). */
export interface LeafMaker {
  entry(jws: string): LogEntry;
}

/** What the holder knows, valid only while it holds the lease. */
interface Holding {
  lease: RoomLock;
  /** When the lease was last taken or renewed (read before the store was asked). */
  renewedAt: number;
  tree: MerkleTree;
  /** Logged receipts per room. */
  counts: Map<string, number>;
  lastSweep: number;
}

export class Integrator {
  private holding: Holding | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly now: () => number;
  /** Set when the stored tree disagrees with its published checkpoint: never sign on top of it. */
  halted: string | null = null;
  /** The latest offer to the witnesses (tests await it; the integrator never does). */
  witnessing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: RoomStore,
    private readonly signer: () => NoteSigner,
    private readonly leaves: LeafMaker,
    private readonly onError: (error: unknown, message: string) => void,
    private readonly options: IntegratorOptions = DEFAULT_INTEGRATOR_OPTIONS,
    private readonly witnesses: Witnesses | null = null,
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await this.holding?.lease.release();
    this.holding = null;
  }

  /** Whether this process holds the lease (tests and metrics). */
  get leader(): boolean {
    return this.holding !== null;
  }

  /**
   * One pass that starts after this call: take or renew the lease, sequence everything queued,
   * publish. A pass already running may have read the queue before the caller's writes, so the
   * caller then gets the pass after it (one, shared by everyone who asks meanwhile).
   */
  integrateNow(): Promise<void> {
    if (!this.running) return this.startPass();
    this.following ??= this.running.then(() => {
      this.following = null;
      return this.stopped ? undefined : this.startPass();
    });
    return this.following;
  }

  private following: Promise<void> | null = null;

  private startPass(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The next pass: the holder's look at the queue, or, without the lease, the next try to take it. */
  private schedule(delayMs = this.options.intervalMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.integrateNow().finally(() =>
        this.schedule(this.holding ? this.options.intervalMs : this.options.leaseMs * LEASE_ATTEMPT_SHARE),
      );
    }, delayMs);
    this.timer.unref?.();
  }

  private async pass(): Promise<void> {
    if (this.halted) return;
    try {
      const holding = await this.hold();
      if (!holding) return;
      await this.backfillFromFrozen(holding);
      if (this.now() - holding.lastSweep >= this.options.sweepMs) await this.sweep(holding);
      for (;;) {
        const queued = await this.store.tlog.queued(this.options.batchSize);
        if (queued.length === 0) break;
        await this.sequence(holding, queued);
        if (queued.length < this.options.batchSize) break;
      }
    } catch (error) {
      this.onError(error, 'transparency log integration failed; the next holder of the lease resumes from the store');
      const lease = this.holding?.lease;
      this.holding = null;
      await lease?.release();
    }
  }

  /** The lease, renewed once it has aged; on taking it, the tree and counts read from the store. */
  private async hold(): Promise<Holding | null> {
    const holding = this.holding;
    if (holding) {
      const at = this.now();
      if (at - holding.renewedAt < this.options.leaseMs * LEASE_RENEWAL_SHARE) return holding;
      if (await holding.lease.renew()) {
        holding.renewedAt = at;
        return holding;
      }
      this.holding = null;
    }
    const at = this.now();
    let lease: RoomLock;
    try {
      lease = await this.store.lock(LOG_LEASE_SLUG, this.options.leaseMs, 0);
    } catch {
      return null; // another process integrates
    }
    const taken = await this.takeOver(lease, at);
    this.holding = taken;
    return taken;
  }

  private async takeOver(lease: RoomLock, takenAt: number): Promise<Holding> {
    const state = await this.store.tlog.state();
    const tree = new MerkleTree();
    const CHUNK = 65_536;
    for (let from = 0; from < state.size; from += CHUNK) {
      const bytes = await this.store.tlog.tileHashes(0, from, Math.min(CHUNK, state.size - from));
      const hashes: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; at += 32) hashes.push(bytes.slice(at, at + 32));
      tree.append(hashes);
    }
    if (tree.size !== state.size) {
      await lease.release();
      throw new Error(`the log stores ${state.size} leaves but only ${tree.size} leaf hashes`);
    }
    if (state.checkpoint) {
      const published = parseCheckpoint(state.checkpoint.slice(0, state.checkpoint.indexOf('\n\n') + 1));
      const root = tree.root(published.size);
      if (!root.every((byte, i) => byte === published.root[i])) {
        this.halted = `the stored tree of ${published.size} leaves does not match its published checkpoint`;
        await lease.release();
        throw new Error(this.halted);
      }
    }
    const holding: Holding = {
      lease,
      renewedAt: takenAt,
      tree,
      counts: await this.store.tlog.loggedCounts(),
      lastSweep: 0,
    };
    // A predecessor that died between append and publish left leaves unpublished: publish them
    // (the note is the same bytes it would have signed). A new log publishes its empty tree.
    if (state.size > state.published || state.checkpoint === null) await this.publish(holding);
    return holding;
  }

  /**
   * Copies the frozen v1 log's receipts into the live log, in their leaf order, once: while the live
   * log is shorter than the frozen one, which only happens before the first receipt after the
   * upgrade (the frozen log never grows). Resumable: a holder that dies half-way leaves the live log
   * at a leaf of the frozen one, and the next continues from there. The last batch records each
   * room's logged count, which is then exactly the frozen log's, so the queue's copies of those
   * receipts are skipped.
   */
  private async backfillFromFrozen(holding: Holding): Promise<void> {
    const frozen = (await this.store.frozenTlog.state()).size;
    if (holding.tree.size >= frozen) return;
    const counts = await this.store.frozenTlog.loggedCounts();
    while (holding.tree.size < frozen) {
      const from = holding.tree.size;
      const jwss = await this.store.frozenTlog.entries(from, Math.min(this.options.batchSize, frozen - from));
      if (jwss.length === 0) throw new Error(`the frozen log stores ${frozen} leaves but has no entry ${from}`);
      const last = from + jwss.length === frozen;
      await this.append(holding, await this.entriesOf(holding, jwss), 0, last ? counts : new Map());
    }
  }

  /** Receipts the queue missed (a crash between a Redis commit and its queueing), and the back-fill. */
  private async sweep(holding: Holding): Promise<void> {
    holding.lastSweep = this.now();
    const behind = await this.store.tlog.roomsBehind(holding.counts);
    if (behind.length === 0) return;
    const missing: QueuedReceipt[] = [];
    for (const slug of behind) {
      const logged = holding.counts.get(slug) ?? 0;
      for (const r of await this.store.receipts(slug)) {
        if (r.sequence > logged) missing.push({ slug, sequence: r.sequence, jws: r.jws, receipt_hash: r.receipt_hash });
      }
    }
    const ordered = backfillOrder(missing);
    for (let at = 0; at < ordered.length; at += this.options.batchSize) {
      await this.sequence(holding, ordered.slice(at, at + this.options.batchSize), 0);
    }
  }

  /**
   * Appends these receipts in order, each room's chain exactly once and in chain order: a receipt
   * already logged is skipped, and one that arrives ahead of a missing earlier receipt of its room
   * brings that one in first (read from the room's chain).
   */
  private async sequence(holding: Holding, items: QueuedReceipt[], consumed = items.length): Promise<void> {
    const counts = new Map<string, number>();
    const logged = (slug: string) => counts.get(slug) ?? holding.counts.get(slug) ?? 0;
    const leaves: QueuedReceipt[] = [];
    for (const item of items) {
      const have = logged(item.slug);
      if (item.sequence <= have) continue;
      if (item.sequence > have + 1) {
        for (const r of await this.store.receipts(item.slug)) {
          if (r.sequence > have && r.sequence < item.sequence) {
            leaves.push({ slug: item.slug, sequence: r.sequence, jws: r.jws, receipt_hash: r.receipt_hash });
          }
        }
      }
      leaves.push(item);
      counts.set(item.slug, item.sequence);
    }
    await this.append(
      holding,
      await this.entriesOf(
        holding,
        leaves.map((leaf) => leaf.jws),
      ),
      consumed,
      counts,
    );
  }

  /**
   * The leaves of these receipts. Labelling costs a VRF output each (about half a millisecond of
   * CPU): the event loop is given back every few, so a batch of thousands never holds up this
   * process's requests for the whole batch, and the lease is renewed as it ages, so a batch that
   * takes longer than the lease on a busy machine is not fenced out when it is done.
   */
  private async entriesOf(holding: Holding, jwss: readonly string[]): Promise<LogEntry[]> {
    const entries: LogEntry[] = [];
    for (const jws of jwss) {
      if (entries.length > 0 && entries.length % LABELS_PER_TURN === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        await this.keepLease(holding);
      }
      entries.push(this.leaves.entry(jws));
    }
    return entries;
  }

  /** Renews the lease once a third of it has passed; throws when it was lost (the pass then starts over). */
  private async keepLease(holding: Holding): Promise<void> {
    const at = this.now();
    if (at - holding.renewedAt < this.options.leaseMs * LEASE_RENEWAL_SHARE) return;
    if (!(await holding.lease.renew())) throw new Error('the log lease was lost while labelling a batch');
    holding.renewedAt = at;
  }

  /** One fenced append of these entries with every tile they complete, then its publication. */
  private async append(
    holding: Holding,
    entries: LogEntry[],
    consumed: number,
    counts: Map<string, number>,
  ): Promise<void> {
    const { tree } = holding;
    const before = tree.size;
    const levelsBefore = tileLevels(tree).map((level) => tree.countAt(level * TILE_HEIGHT));
    tree.append(entries.map((entry) => leafHash(encoder.encode(entry.data))));
    const tiles = tileLevels(tree).flatMap((level) => {
      const from = levelsBefore[level] ?? 0;
      const to = tree.countAt(level * TILE_HEIGHT);
      return to > from ? [{ level, from, hashes: concatHashes(tree.hashesAt(level * TILE_HEIGHT, from, to)) }] : [];
    });
    await this.store.tlog.append({
      expected_size: before,
      leaves: entries,
      tiles,
      consumed,
      rooms: Object.fromEntries(counts),
      fence: holding.lease.token,
    });
    for (const [slug, count] of counts) holding.counts.set(slug, count);
    if (entries.length > 0) await this.publish(holding);
  }

  private async publish(holding: Holding): Promise<void> {
    const { tree } = holding;
    const size = tree.size;
    const note = this.signer().signCheckpoint(size, tree.root());
    await this.store.tlog.publish(size, note, holding.lease.token);
    if (this.witnesses?.configured) {
      this.witnessing = this.witnesses.offer(note, size, (from) => tree.consistency(from, size));
    }
  }
}

/** The tile levels that hold at least one hash in this tree. */
function tileLevels(tree: MerkleTree): number[] {
  const levels: number[] = [];
  for (let level = 0; tree.countAt(level * TILE_HEIGHT) > 0 || level === 0; level++) levels.push(level);
  return levels;
}
