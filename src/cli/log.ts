/**
 * The command line's transparency-log checks (docs/transparency-log.md):
 *
 * - `verifyRoomInLog`, run by `conclave verify`: the member's audit of its room (every leaf of the
 *   room found by its position labels in the latest checkpoint's tree, no position with two
 *   receipts, none never shown, none missing), and that checkpoint is consistent with the newest one
 *   this machine saw from the same log before (kept in the config directory, by origin). A rollback,
 *   a fork or a split view is a failure that says so.
 * - `conclave log [--dir]` mirrors the log (checkpoints, hash tiles, entry bundles) with plain GETs;
 *   `conclave log audit` refreshes the mirror and recomputes every leaf hash, every tile and every
 *   checkpoint's root from the entries, naming the first leaf that disagrees.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { auditRoomLog, type RoomLogAudit } from '../client/room-log.js';
import { LogVerificationError, type VerifiedCheckpoint, verifyCheckpoint, verifyConsistency } from '../client/tlog.js';
import type { Auth } from '../client/transport.js';
import { hashesEqual, leafHash } from '../tlog/merkle.js';
import { fromBase64, toBase64 } from '../tlog/note.js';
import { concatHashes, decodeEntryBundle, splitHashes, TILE_HEIGHT, TILE_WIDTH, tilePath } from '../tlog/tiles.js';
import { MerkleTree } from '../tlog/tree.js';

/** A check that failed: the message names what (a receipt, a leaf, a checkpoint). */
export class LogCheckFailed extends Error {}

interface Remembered {
  size: number;
  root: string;
  note: string;
  seen_at: string;
}

async function getText(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

type Json = Record<string, unknown>;

async function getJson(url: string): Promise<Json> {
  const { status, text } = await getText(url);
  if (status !== 200) throw new LogCheckFailed(`GET ${url} answered ${status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as Json;
}

function proofOf(body: Json, field: 'inclusion_proof' | 'consistency_proof'): string[] {
  const proof = body[field];
  return Array.isArray(proof) ? proof.filter((item): item is string => typeof item === 'string') : [];
}

async function getBytes(url: string): Promise<Uint8Array> {
  const response = await fetch(url);
  if (response.status !== 200) throw new LogCheckFailed(`GET ${url} answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The log's verifier key from discovery; null when the service publishes no log. */
async function logKey(base: string): Promise<string | null> {
  const discovery = await getJson(`${base}/.well-known/svc.json`);
  const key = (discovery.audit_log as Json | undefined)?.verifier_key;
  return typeof key === 'string' ? key : null;
}

async function latestCheckpoint(base: string, key: string): Promise<VerifiedCheckpoint> {
  const { status, text } = await getText(`${base}/log/checkpoint`);
  if (status !== 200) throw new LogCheckFailed(`the log serves no checkpoint (HTTP ${status})`);
  try {
    return await verifyCheckpoint(text, key);
  } catch (error) {
    throw new LogCheckFailed(`the latest checkpoint does not verify: ${(error as Error).message}`);
  }
}

/** Where the newest checkpoint seen from each log is kept: beside the CLI's config file. */
function rememberedFile(configFile: string): string {
  return path.join(path.dirname(configFile), 'checkpoints.json');
}

async function readRemembered(file: string): Promise<Record<string, Remembered>> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Record<string, Remembered>;
  } catch {
    return {};
  }
}

/**
 * Proves `latest` consistent with the newest checkpoint seen before from this log (by origin), then
 * remembers `latest`. Returns a line for the report.
 */
async function checkAgainstRemembered(base: string, latest: VerifiedCheckpoint, configFile: string): Promise<string> {
  const file = rememberedFile(configFile);
  const all = await readRemembered(file);
  const before = all[latest.origin];
  let line = `checkpoint ${latest.size} is the first seen from ${latest.origin}`;
  if (before) {
    if (latest.size < before.size) {
      throw new LogCheckFailed(
        `rollback: the log now shows ${latest.size} leaves, but checkpoint ${before.size} was seen on ${before.seen_at}: leaf ${latest.size} onward is gone`,
      );
    }
    if (latest.size > before.size) {
      const proof = await getJson(`${base}/log/proof/consistency?first=${before.size}&second=${latest.size}`);
      if (!verifyConsistency(before, latest, proofOf(proof, 'consistency_proof'))) {
        throw new LogCheckFailed(
          `fork: checkpoint ${latest.size} is not consistent with checkpoint ${before.size} seen on ${before.seen_at}`,
        );
      }
    } else if (latest.root !== before.root) {
      throw new LogCheckFailed(
        `fork: two different checkpoints of size ${latest.size} (the other seen on ${before.seen_at})`,
      );
    }
    line = `checkpoint ${latest.size} is consistent with checkpoint ${before.size} seen on ${before.seen_at}`;
  }
  if (!before || latest.size > before.size) {
    all[latest.origin] = { size: latest.size, root: latest.root, note: latest.note, seen_at: new Date().toISOString() };
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  }
  return line;
}

/** A failed audit, said the way the report names it: the receipt's row, its position, the leaves. */
function auditFailure(audit: RoomLogAudit): string {
  const rowOf = (sequence: number) =>
    audit.receipts.find((r) => r.sequence === sequence)?.row ?? `position ${sequence}`;
  const size = audit.checkpoint.size;
  const fork = audit.forks[0];
  if (fork) {
    return `fork: position ${fork.sequence} of the room's chain (${rowOf(fork.sequence)}) has ${fork.commitments.length} different receipts in the log, at leaves ${fork.leaf_indexes.join(', ')} of checkpoint ${size}`;
  }
  const unseen = audit.unseen[0];
  if (unseen) {
    return `unseen: the log holds a receipt at position ${unseen.sequence} of the room's chain (leaf ${unseen.leaf_indexes.join(', ')} of checkpoint ${size}) that the service never showed`;
  }
  const missing = audit.missing[0] as RoomLogAudit['missing'][number];
  const found = audit.positions.find((p) => p.sequence === missing.sequence);
  if (found && found.leaf_indexes.length > 0) {
    return `${rowOf(missing.sequence)}: the log holds a different receipt at leaf ${found.leaf_indexes.join(', ')} of checkpoint ${size}`;
  }
  return `${rowOf(missing.sequence)}: not in the transparency log (checkpoint ${size}): ${missing.reason}`;
}

/**
 * The room's audit in the log (src/client/room-log.ts, run by `conclave verify`): every leaf of the
 * room found by its proven position labels in the latest checkpoint's entries (which must be that
 * signed tree), no position with two receipts, none the member was not shown, none of its receipts
 * missing; and the checkpoint consistent with the newest one this machine saw from the same log.
 * Receipts not yet sequenced are waited for up to `waitMs`.
 */
export async function verifyRoomInLog(options: {
  base: string;
  slug: string;
  auth: Auth;
  configFile: string;
  waitMs: number;
}): Promise<string[]> {
  const key = await logKey(options.base);
  if (!key) return ['the service publishes no transparency log (no audit_log in discovery): not checked'];
  let audit: RoomLogAudit;
  try {
    audit = await auditRoomLog({
      baseUrl: options.base,
      slug: options.slug,
      auth: options.auth,
      waitMs: options.waitMs,
    });
  } catch (error) {
    if (error instanceof LogVerificationError) throw new LogCheckFailed(error.message);
    throw error;
  }
  const lines = [await checkAgainstRemembered(options.base, audit.checkpoint, options.configFile)];
  if (!audit.ok) throw new LogCheckFailed(auditFailure(audit));
  for (const receipt of audit.receipts) {
    const leaves = audit.positions.find((p) => p.sequence === receipt.sequence)?.leaf_indexes ?? [];
    lines.push(`${receipt.row}: leaf ${leaves.join(', ')} of checkpoint ${audit.checkpoint.size}`);
  }
  lines.push(
    `found ${audit.leaves_found} of the room's leaves in the log (tree size ${audit.tree_size}); no position has two`,
  );
  return lines;
}

// --- mirror and audit ------------------------------------------------------------------------

function mirrorDir(configFile: string, origin: string): string {
  return path.join(path.dirname(configFile), 'logs', origin.replace(/[^A-Za-z0-9._-]+/g, '_'));
}

async function readIfPresent(file: string): Promise<Uint8Array | null> {
  try {
    return new Uint8Array(await readFile(file));
  } catch {
    return null;
  }
}

async function save(file: string, bytes: Uint8Array | string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, bytes);
}

/** Tiles needed for a tree of `size` leaves at one level: full ones, then the partial one if any. */
function tilesFor(hashCount: number): { index: number; width: number }[] {
  const tiles: { index: number; width: number }[] = [];
  for (let index = 0; index * TILE_WIDTH < hashCount; index++) {
    tiles.push({ index, width: Math.min(TILE_WIDTH, hashCount - index * TILE_WIDTH) });
  }
  return tiles;
}

/** Fetches what the mirror lacks: every published checkpoint, then the tiles and bundles of the latest. */
export async function mirrorLog(
  base: string,
  configFile: string,
  dir?: string,
): Promise<{ dir: string; latest: VerifiedCheckpoint }> {
  const key = await logKey(base);
  if (!key) throw new LogCheckFailed('the service publishes no transparency log (no audit_log in discovery)');
  // The note key's name is the log's origin.
  const root = dir ?? mirrorDir(configFile, key.slice(0, key.indexOf('+')));
  await save(path.join(root, 'verifier-key'), `${key}\n`);
  let after = -1;
  for (;;) {
    const page = await getJson(`${base}/log/checkpoints${after < 0 ? '' : `?after=${after}`}`);
    for (const size of (page.sizes ?? []) as number[]) {
      const file = path.join(root, 'checkpoint', String(size));
      if (!(await readIfPresent(file))) await save(file, (await getText(`${base}/log/checkpoint/${size}`)).text);
    }
    if (page.next_after === null || page.next_after === undefined) break;
    after = page.next_after as number;
  }
  // Read after the listing: the log only grows, so every checkpoint mirrored so far is at most this
  // size unless the log was truncated (which the audit reports).
  const latest = await latestCheckpoint(base, key);
  await save(path.join(root, 'checkpoint', String(latest.size)), latest.note);
  for (let level = 0; latest.size >= TILE_WIDTH ** level || level === 0; level++) {
    const hashCount = Math.floor(latest.size / TILE_WIDTH ** level);
    if (hashCount === 0) break;
    for (const tile of tilesFor(hashCount)) {
      const relative = tilePath({ level, ...tile });
      const file = path.join(root, relative);
      // Full tiles never change: a mirrored one is kept as it was first seen.
      if (tile.width === TILE_WIDTH && (await readIfPresent(file))) continue;
      await save(file, await getBytes(`${base}/log/${relative}`));
    }
  }
  for (const tile of tilesFor(latest.size)) {
    const relative = tilePath({ level: 'entries', ...tile });
    const file = path.join(root, relative);
    if (tile.width === TILE_WIDTH && (await readIfPresent(file))) continue;
    await save(file, await getBytes(`${base}/log/${relative}`));
  }
  return { dir: root, latest };
}

/**
 * Recomputes the log from the mirror's entry bundles: each entry's leaf hash against the level-0
 * tiles, every higher tile, and the root of every mirrored checkpoint (each signature verified).
 */
export async function auditMirror(dir: string, latest: VerifiedCheckpoint): Promise<string[]> {
  const key = new TextDecoder()
    .decode((await readIfPresent(path.join(dir, 'verifier-key'))) ?? new Uint8Array())
    .trim();
  const tree = new MerkleTree();
  for (const tile of tilesFor(latest.size)) {
    const bundle = await readIfPresent(path.join(dir, tilePath({ level: 'entries', ...tile })));
    const entries = bundle ? decodeEntryBundle(bundle) : [];
    const hashes = splitHashes(
      (await readIfPresent(path.join(dir, tilePath({ level: 0, ...tile })))) ?? new Uint8Array(),
    );
    for (let i = 0; i < tile.width; i++) {
      const leaf = tile.index * TILE_WIDTH + i;
      const entry = entries[i];
      if (!entry) throw new LogCheckFailed(`leaf ${leaf}: missing from the log's entries (truncated at ${leaf})`);
      const hash = leafHash(entry);
      const tiled = hashes[i];
      if (!tiled || !hashesEqual(hash, tiled)) {
        throw new LogCheckFailed(`leaf ${leaf}: its entry does not hash to the leaf hash in the log's tile`);
      }
      tree.append([hash]);
    }
    if (entries.length !== tile.width) {
      throw new LogCheckFailed(
        `leaf ${tile.index * TILE_WIDTH + tile.width}: entry bundle ${tile.index} holds extra entries`,
      );
    }
  }
  for (let level = 1; Math.floor(latest.size / TILE_WIDTH ** level) > 0; level++) {
    for (const tile of tilesFor(Math.floor(latest.size / TILE_WIDTH ** level))) {
      const stored = await readIfPresent(path.join(dir, tilePath({ level, ...tile })));
      const from = tile.index * TILE_WIDTH;
      const computed = concatHashes(tree.hashesAt(level * TILE_HEIGHT, from, from + tile.width));
      if (!stored || toBase64(stored) !== toBase64(computed)) {
        throw new LogCheckFailed(
          `tile ${tilePath({ level, ...tile })} (leaves ${from * TILE_WIDTH ** level}…) does not match the entries`,
        );
      }
    }
  }
  const lines: string[] = [];
  let checked = 0;
  let after = -1;
  const sizes = await readdir(path.join(dir, 'checkpoint')).catch(() => [] as string[]);
  for (const name of sizes.map(Number).sort((a, b) => a - b)) {
    if (!Number.isSafeInteger(name) || name <= after) continue;
    after = name;
    const note = new TextDecoder().decode(
      (await readIfPresent(path.join(dir, 'checkpoint', String(name)))) ?? new Uint8Array(),
    );
    let checkpoint: VerifiedCheckpoint;
    try {
      checkpoint = await verifyCheckpoint(note, key);
    } catch (error) {
      throw new LogCheckFailed(`checkpoint ${name}: ${(error as LogVerificationError).message}`);
    }
    if (checkpoint.size > latest.size) {
      throw new LogCheckFailed(
        `leaf ${latest.size}: the log was truncated: it now shows ${latest.size} leaves, but its signed checkpoint ${checkpoint.size} (in the mirror) covers leaves up to ${checkpoint.size - 1}`,
      );
    }
    if (!hashesEqual(tree.root(checkpoint.size), fromBase64(checkpoint.root))) {
      throw new LogCheckFailed(
        `checkpoint ${checkpoint.size}: its root is not the tree of the log's first ${checkpoint.size} entries (leaf ${checkpoint.size - 1} or earlier differs)`,
      );
    }
    checked++;
  }
  lines.push(`${latest.size} leaves recomputed from their entries; ${checked} checkpoints match their roots`);
  return lines;
}

/** Registers `conclave log` and `conclave log audit` on the program. */
export function registerLogCommands(
  program: Command,
  context: (command: Command) => Promise<{ base: string; json: boolean; configFile: string }>,
): void {
  const log = program
    .command('log')
    .description("mirror the service's transparency log (checkpoints, tiles, entries) into a local folder")
    .option('--dir <folder>', 'where to keep the mirror (default: beside the config file)')
    .action(async (options: { dir?: string }, command: Command) => {
      const { base, json, configFile } = await context(command);
      const { dir, latest } = await mirrorLog(base, configFile, options.dir);
      console.log(
        json
          ? JSON.stringify({ dir, size: latest.size, root: latest.root })
          : `✓ mirrored ${latest.size} leaves into ${dir}`,
      );
    });
  log
    .command('audit')
    .description('refresh the mirror and recompute every leaf, tile and checkpoint root from the entries')
    .option('--dir <folder>', 'the mirror folder (default: beside the config file)')
    .action(async (options: { dir?: string }, command: Command) => {
      const { base, json, configFile } = await context(command);
      const { dir, latest } = await mirrorLog(
        base,
        configFile,
        options.dir ?? command.parent?.opts<{ dir?: string }>().dir,
      );
      const lines = await auditMirror(dir, latest);
      console.log(
        json ? JSON.stringify({ ok: true, size: latest.size, lines }) : lines.map((l) => `✓ ${l}`).join('\n'),
      );
    });
}
