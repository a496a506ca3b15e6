/**
 * The transparency log's read API under /log/ (docs/transparency-log.md): the C2SP tlog-tiles
 * layout (checkpoint, hash tiles, entry bundles) for mirrors, every published checkpoint by size,
 * and two convenience proofs. Public like the JWKS: the log holds only receipts, which the protocol
 * already treats as publishable proofs, and no credential is asked for or read.
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

function notFound(message: string) {
  return protocolError('vendor:conclave:not_found', message, {
    hint: 'GET /log/checkpoint names the latest published tree size; ask within it.',
  });
}

async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LogRequestError) {
      throw error.reason === 'not_found' ? notFound(error.message) : badParameter('size', error.message);
    }
    throw error;
  }
}

function sendNote(reply: FastifyReply, note: string, cache: string): FastifyReply {
  return reply.header('content-type', 'text/plain; charset=utf-8').header('cache-control', cache).send(note);
}

export function registerLogRoutes(app: FastifyInstance, log: TransparencyLog, witnessed = false): void {
  // A checkpoint's bytes never change, but witnesses add cosignature lines to it after publication.
  const checkpointCache = witnessed ? 'public, max-age=60' : IMMUTABLE;
  app.get('/log/checkpoint', async (_request, reply) => {
    const latest = await log.latest();
    if (!latest) throw notFound('The log has not published a checkpoint yet; retry in a few seconds.');
    return sendNote(reply, await log.cosigned(latest), 'no-cache');
  });

  app.get<{ Querystring: Record<string, unknown> }>('/log/checkpoints', async (request, reply) => {
    const after = request.query.after === undefined ? -1 : count(request.query.after, 'after');
    const sizes = await log.checkpointSizes(after, SIZES_PAGE);
    return reply.header('cache-control', 'no-cache').send({
      sizes,
      next_after: sizes.length === SIZES_PAGE ? sizes.at(-1) : null,
    });
  });

  app.get<{ Params: { size: string } }>('/log/checkpoint/:size', async (request, reply) => {
    const size = count(request.params.size, 'size');
    const checkpoint = await answer(() => log.checkpointAt(size));
    return sendNote(reply, await log.cosigned(checkpoint), checkpointCache);
  });

  app.get<{ Params: { '*': string } }>('/log/tile/*', async (request, reply) => {
    const address = parseTilePath(`tile/${request.params['*']}`);
    if (!address) {
      throw badParameter(
        'path',
        'Not a tile path: use /log/tile/<level>/<index>[.p/<width>] or /log/tile/entries/<index>[.p/<width>] (C2SP tlog-tiles).',
      );
    }
    const { level, index, width } = address;
    reply
      .header('content-type', 'application/octet-stream')
      .header('cache-control', width === TILE_WIDTH ? IMMUTABLE : 'public, max-age=60');
    if (level === 'entries') {
      const chunks = await answer(() => log.entryBundle(index, width));
      return reply.send(Readable.from(chunks, { objectMode: false }));
    }
    return reply.send(Buffer.from(await answer(() => log.hashTile(level, index, width))));
  });

  app.get<{ Querystring: Record<string, unknown> }>('/log/proof/inclusion', async (request, reply) => {
    const index = count(request.query.index, 'index');
    const size = count(request.query.size, 'size');
    const { checkpoint, proof } = await answer(() => log.inclusion(index, size));
    return reply
      .header('cache-control', IMMUTABLE)
      .send({ index, tree_size: size, checkpoint: checkpoint.note, inclusion_proof: proof.map(toBase64) });
  });

  app.get<{ Querystring: Record<string, unknown> }>('/log/proof/consistency', async (request, reply) => {
    const first = count(request.query.first, 'first');
    const second = count(request.query.second, 'second');
    const proof = await answer(() => log.consistency(first, second));
    return reply.header('cache-control', IMMUTABLE).send({
      first,
      second,
      second_checkpoint: proof.second.note,
      consistency_proof: proof.proof.map(toBase64),
    });
  });
}
