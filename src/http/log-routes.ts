/**
 * The transparency log's read API under /log/ (docs/transparency-log.md): the C2SP tlog-tiles
 * layout (checkpoint, hash tiles, entry bundles) for mirrors, every published checkpoint by size,
 * and two convenience proofs. Public, and no credential is asked for or read: every leaf is a
 * commitment under a VRF position label, which names no room (position-labels.ts).
 *
 * The frozen v1 log, whose leaves are whole receipts, is served read-only under /log/v1/ (only
 * when it has leaves): checkpoints, hash tiles and proofs, but its entry bundles answer 410.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { protocolError } from '../errors.js';
import { LogRequestError, type TransparencyLog } from '../tlog/log.js';
import { toBase64 } from '../tlog/note.js';
import { parseTilePath, TILE_WIDTH } from '../tlog/tiles.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Checkpoint sizes per page of GET /log/checkpoints. */
const SIZES_PAGE = 1000;
const SIZE = /^(0|[1-9][0-9]{0,15})$/;

function badParameter(field: string, message: string) {
  return protocolError('input.invalid', message, { details: { reason: 'wrong_type', field } });
}

/** A tree size or leaf index from the query or path: a canonical decimal safe integer. */
function count(value: unknown, field: string): number {
  if (typeof value !== 'string' || !SIZE.test(value) || !Number.isSafeInteger(Number(value))) {
    throw badParameter(field, `${field} must be a non-negative decimal integer, for example ${field}=0.`);
  }
  return Number(value);
}

function notFound(message: string, prefix: string) {
  return protocolError('vendor:conclave:not_found', message, {
    hint: `GET ${prefix}/checkpoint names the latest published tree size; ask within it.`,
  });
}

/** The frozen log's entry bundles: withheld for good, with why and what is still served. */
function withheld(message: string) {
  return protocolError('vendor:conclave:not_found', message, {
    status: 410,
    hint: 'The frozen log’s checkpoints, hash tiles and proofs are still served under /log/v1/; the live log at /log/ holds every receipt as a commitment.',
  });
}

async function answer<T>(work: () => Promise<T>, prefix: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LogRequestError) {
      if (error.reason === 'gone') throw withheld(error.message);
      throw error.reason === 'not_found' ? notFound(error.message, prefix) : badParameter('size', error.message);
    }
    throw error;
  }
}

function sendNote(reply: FastifyReply, note: string, cache: string): FastifyReply {
  return reply.header('content-type', 'text/plain; charset=utf-8').header('cache-control', cache).send(note);
}

export interface LogRouteOptions {
  /** Where the log is served: `/log` (live) or `/log/v1` (frozen). */
  prefix: string;
  /** Witnesses are configured: checkpoints gain lines after publication. */
  witnessed: boolean;
  /**
   * Serve only while this answers true (the frozen log: only when it has leaves); otherwise every
   * route answers 404 saying there is no such log.
   */
  present?: () => Promise<boolean>;
}

export function registerLogRoutes(
  app: FastifyInstance,
  log: TransparencyLog,
  { prefix, witnessed, present }: LogRouteOptions,
): void {
  // A checkpoint's bytes never change, but witnesses add cosignature lines to it after publication.
  const checkpointCache = witnessed ? 'public, max-age=60' : IMMUTABLE;
  const answered = <T>(work: () => Promise<T>) => answer(work, prefix);
  if (present) {
    app.addHook('onRequest', async (request) => {
      const path = request.url.split('?')[0] ?? '';
      if (!path.startsWith(`${prefix}/`) || (await present())) return;
      throw protocolError('vendor:conclave:not_found', `This service has no frozen log at ${prefix}/.`, {
        hint: 'The frozen log exists only on a service upgraded from a log whose leaves were whole receipts; the live log is at /log/.',
      });
    });
  }
  app.get(`${prefix}/checkpoint`, async (_request, reply) => {
    const latest = await log.latest();
    if (!latest) throw notFound('The log has not published a checkpoint yet; retry in a few seconds.', prefix);
    return sendNote(reply, await log.cosigned(latest), 'no-cache');
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${prefix}/checkpoints`, async (request, reply) => {
    const after = request.query.after === undefined ? -1 : count(request.query.after, 'after');
    const sizes = await log.checkpointSizes(after, SIZES_PAGE);
    return reply.header('cache-control', 'no-cache').send({
      sizes,
      next_after: sizes.length === SIZES_PAGE ? sizes.at(-1) : null,
    });
  });

  app.get<{ Params: { size: string } }>(`${prefix}/checkpoint/:size`, async (request, reply) => {
    const size = count(request.params.size, 'size');
    const checkpoint = await answered(() => log.checkpointAt(size));
    return sendNote(reply, await log.cosigned(checkpoint), checkpointCache);
  });

  app.get<{ Params: { '*': string } }>(`${prefix}/tile/*`, async (request, reply) => {
    const address = parseTilePath(`tile/${request.params['*']}`);
    if (!address) {
      throw badParameter(
        'path',
        `Not a tile path: use ${prefix}/tile/<level>/<index>[.p/<width>] or ${prefix}/tile/entries/<index>[.p/<width>] (C2SP tlog-tiles).`,
      );
    }
    const { level, index, width } = address;
    reply
      .header('content-type', 'application/octet-stream')
      .header('cache-control', width === TILE_WIDTH ? IMMUTABLE : 'public, max-age=60');
    if (level === 'entries') {
      const chunks = await answered(() => log.entryBundle(index, width));
      return reply.send(Readable.from(chunks, { objectMode: false }));
    }
    return reply.send(Buffer.from(await answered(() => log.hashTile(level, index, width))));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${prefix}/proof/inclusion`, async (request, reply) => {
    const index = count(request.query.index, 'index');
    const size = count(request.query.size, 'size');
    const { checkpoint, proof } = await answered(() => log.inclusion(index, size));
    return reply
      .header('cache-control', IMMUTABLE)
      .send({ index, tree_size: size, checkpoint: checkpoint.note, inclusion_proof: proof.map(toBase64) });
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${prefix}/proof/consistency`, async (request, reply) => {
    const first = count(request.query.first, 'first');
    const second = count(request.query.second, 'second');
    const proof = await answered(() => log.consistency(first, second));
    return reply.header('cache-control', IMMUTABLE).send({
      first,
      second,
      second_checkpoint: proof.second.note,
      consistency_proof: proof.proof.map(toBase64),
    });
  });
}
