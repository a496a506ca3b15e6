/**
 * The read side of the transparency log, in every process: the latest and every published
 * checkpoint, tiles, entry bundles, and proofs. Proofs come from an in-memory tree that follows the
 * store up to the latest published size (complete subtrees never change, so it only grows), and
 * only sizes that have a published checkpoint are served.
 */
import type { Keyring } from '../receipts/keyring.js';
import { StoreUnavailableError } from '../store/port.js';
import type { LogReader } from '../store/tlog-port.js';
import type { Hash } from './merkle.js';
import { parseCheckpoint, parseNote } from './note.js';
import { logOrigin, NoteSigner } from './note-signer.js';
import { encodeEntryBundle, TILE_WIDTH } from './tiles.js';
import { MerkleTree } from './tree.js';
import { withCosignatures } from './witness.js';

export interface PublishedCheckpoint {
  note: string;
  size: number;
  root: Uint8Array;
}

/** Why a log request cannot be answered: the route turns it into a 4xx envelope. */
export class LogRequestError extends Error {
  constructor(
    /** `gone`: withheld for good (the frozen log's entry bundles). */
    readonly reason: 'not_found' | 'invalid' | 'gone',
    message: string,
  ) {
    super(message);
    this.name = 'LogRequestError';
  }
}

const encoder = new TextEncoder();

/** Entries read from the store per chunk of a streamed bundle. */
const ENTRIES_PER_READ = 16;

export function checkpointOf(note: string): PublishedCheckpoint {
  const body = parseCheckpoint(note.slice(0, note.indexOf('\n\n') + 1));
  return { note, size: body.size, root: body.root };
}

/** Published checkpoints kept in memory for proofs (oldest asked-for dropped first; ~300 bytes each). */
const KEPT_CHECKPOINTS = 1024;

export class TransparencyLog {
  private readonly tree = new MerkleTree();
  private readonly published = new Map<number, PublishedCheckpoint>();
  private following: Promise<void> | null = null;
  private signer: NoteSigner | null = null;

  constructor(
    private readonly store: LogReader,
    private readonly keyring: Keyring,
    /** Read lazily: tests learn the service's address once it listens. */
    private readonly baseUrl: () => string,
    /** Verifier keys of the witnesses that cosign (published in discovery). */
    readonly witnessKeys: readonly string[] = [],
    private readonly options: {
      /** The log's origin from the base URL: the live log's by default. */
      origin?: (baseUrl: string) => string;
      /**
       * Why entry bundles are not served, or null when they are. The frozen v1 log's leaves are whole
       * receipts, which name rooms the read wall hides; its hash tiles and proofs stay served.
       */
      entriesWithheld?: string | null;
    } = {},
  ) {}

  /** This log's origin line, from the base URL. */
  get origin(): string {
    return (this.options.origin ?? logOrigin)(this.baseUrl());
  }

  /** The checkpoint signer: the log's origin (from the base URL) and the note key derived from the current receipt key. */
  noteSigner(): NoteSigner {
    const origin = this.origin;
    const signing = this.keyring.current;
    if (!this.signer || this.signer.name !== origin || this.signerKid !== signing.kid) {
      this.signer = new NoteSigner(origin, signing);
      this.signerKid = signing.kid;
    }
    return this.signer;
  }

  private signerKid = '';

  /**
   * The origin and verifier key of the note key that signed this log's latest checkpoint, among the
   * keys the service holds (the frozen log was signed by whichever receipt key was current then);
   * null when nothing was published or no held key signed it.
   */
  async signedBy(): Promise<{ origin: string; verifierKey: string } | null> {
    const latest = await this.latest();
    if (!latest) return null;
    // The origin as the checkpoints carry it: the frozen log's was the base URL of its time.
    const origin = latest.note.slice(0, latest.note.indexOf('\n'));
    const ids = parseNote(latest.note).signatures.map((line) => Buffer.from(line.id).toString('hex'));
    for (const key of this.keyring.all) {
      const signer = new NoteSigner(origin, key);
      if (ids.includes(Buffer.from(signer.id).toString('hex'))) return { origin, verifierKey: signer.verifierKey };
    }
    return null;
  }

  async latest(): Promise<PublishedCheckpoint | null> {
    const state = await this.store.state();
    return state.checkpoint ? checkpointOf(state.checkpoint) : null;
  }

  /**
   * The checkpoint published at `size`. A published note never changes (the store refuses a second,
   * different note for a size), so the ones proofs were asked against are kept in memory: a proof
   * then reads nothing from the store (docs/transparency-log.md, Costs).
   */
  async checkpointAt(size: number): Promise<PublishedCheckpoint> {
    const known = this.published.get(size);
    if (known) return known;
    const note = await this.store.checkpointAt(size);
    if (!note) throw new LogRequestError('not_found', `no checkpoint of size ${size} was published`);
    const checkpoint = checkpointOf(note);
    if (this.published.size >= KEPT_CHECKPOINTS) {
      this.published.delete(this.published.keys().next().value as number);
    }
    this.published.set(size, checkpoint);
    return checkpoint;
  }

  /** The note with every witness cosignature recorded for its size (what the checkpoint routes serve). */
  async cosigned(checkpoint: PublishedCheckpoint): Promise<string> {
    return withCosignatures(checkpoint.note, await this.store.cosignatures(checkpoint.size));
  }

  checkpointSizes(after: number, limit: number): Promise<number[]> {
    return this.store.checkpointSizes(after, limit);
  }

  /** An inclusion proof of leaf `index` against the published checkpoint of `size`. */
  async inclusion(index: number, size: number): Promise<{ checkpoint: PublishedCheckpoint; proof: Hash[] }> {
    if (index >= size) throw new LogRequestError('invalid', `leaf ${index} is not in a tree of ${size} leaves`);
    const checkpoint = await this.checkpointAt(size);
    await this.follow(size);
    return { checkpoint, proof: this.tree.inclusion(index, size) };
  }

  /**
   * A consistency proof from the tree of `first` leaves (any size up to `second`: a verifier may
   * hold a checkpoint of a size this log never published, from a fork) to the published checkpoint
   * of `second`.
   */
  async consistency(first: number, second: number): Promise<{ second: PublishedCheckpoint; proof: Hash[] }> {
    if (first > second)
      throw new LogRequestError('invalid', `the first size (${first}) exceeds the second (${second})`);
    const checkpoint = await this.checkpointAt(second);
    await this.follow(second);
    return { second: checkpoint, proof: this.tree.consistency(first, second) };
  }

  /** A receipt's leaf index once a published checkpoint covers it, else null. */
  async publishedIndexOf(receiptHash: string, latest: PublishedCheckpoint | null): Promise<number | null> {
    const index = await this.store.indexOf(receiptHash);
    return index !== null && latest && index < latest.size ? index : null;
  }

  /** The data of leaf `index` (the commitment leaf's ASCII), or null when it is not stored. */
  async leafData(index: number): Promise<string | null> {
    return (await this.store.entries(index, 1))[0] ?? null;
  }

  /** Where a receipt is in the log, with its inclusion proof against the latest checkpoint; null before it is published. */
  async receiptProof(
    receiptHash: string,
    /** The latest checkpoint when the caller already read it (one read for a whole outcome). */
    latestKnown?: PublishedCheckpoint | null,
  ): Promise<{ index: number; checkpoint: PublishedCheckpoint; proof: Hash[] } | null> {
    const index = await this.store.indexOf(receiptHash);
    if (index === null) return null;
    const latest = latestKnown === undefined ? await this.latest() : latestKnown;
    if (!latest || index >= latest.size) return null;
    await this.follow(latest.size);
    return { index, checkpoint: latest, proof: this.tree.inclusion(index, latest.size) };
  }

  /**
   * A hash tile's bytes, only within the latest published tree: a full tile (256 wide) once the tree
   * covers it, or the partial tile of exactly the width the tree has.
   */
  async hashTile(level: number, index: number, width: number): Promise<Uint8Array> {
    const size = (await this.latest())?.size ?? 0;
    this.assertWithin(Math.max(0, Math.floor(size / TILE_WIDTH ** level) - index * TILE_WIDTH), width, 'tile');
    return this.store.tileHashes(level, index * TILE_WIDTH, width);
  }

  /**
   * An entry bundle, checked like a tile, then produced a few entries at a time: a receipt can be
   * megabytes (large options), and a bundle of 256 of them is never held in memory at once.
   */
  async entryBundle(index: number, width: number): Promise<AsyncGenerator<Uint8Array>> {
    if (this.options.entriesWithheld) throw new LogRequestError('gone', this.options.entriesWithheld);
    const size = (await this.latest())?.size ?? 0;
    this.assertWithin(Math.max(0, size - index * TILE_WIDTH), width, 'entry bundle');
    const store = this.store;
    return (async function* () {
      for (let at = 0; at < width; at += ENTRIES_PER_READ) {
        const entries = await store.entries(index * TILE_WIDTH + at, Math.min(ENTRIES_PER_READ, width - at));
        yield encodeEntryBundle(entries.map((data) => encoder.encode(data)));
      }
    })();
  }

  /**
   * A full tile once the published tree covers it; a partial tile of any width the tree covers (its
   * content, the first W hashes, never changes, so a mirror that read an older checkpoint can
   * still fetch the partial tile it names while the log grows).
   */
  private assertWithin(available: number, width: number, what: string): void {
    if (width > available) throw new LogRequestError('not_found', `no such ${what} in the published tree`);
  }

  /** Brings the in-memory tree up to `size` leaves from the store's level-0 tile (one follow at a time). */
  private async follow(size: number): Promise<void> {
    while (this.tree.size < size) {
      this.following ??= (async () => {
        const from = this.tree.size;
        const bytes = await this.store.tileHashes(0, from, Math.min(65_536, size - from));
        if (bytes.length === 0) throw new StoreUnavailableError(`the log store has no leaf hash at ${from}`);
        const hashes: Hash[] = [];
        for (let at = 0; at < bytes.length; at += 32) hashes.push(bytes.slice(at, at + 32));
        this.tree.append(hashes);
      })().finally(() => {
        this.following = null;
      });
      await this.following;
    }
  }
}
