/**
 * OpenAPI description of the transparency log's read API (src/http/log-routes.ts; docs/transparency-log.md,
 * The read API), for buildOpenApi to merge: public GETs, signed notes as text/plain, tiles as bytes,
 * proofs as JSON components. Errors are the protocol envelope.
 */
import type { ErrorCode } from '../errors.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const count = (description: string) => ({ type: 'integer', minimum: 0, description });
const base64Hashes = (description: string) => ({
  type: 'array',
  description,
  items: { type: 'string', description: 'A SHA-256 hash, base64 (44 characters).' },
});

/** The empty tree's checkpoint of the test instance in docs/transparency-log.md (origin <host>/log/v2). */
const CHECKPOINT_EXAMPLE =
  '127.0.0.1:3000/log/v2\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— 127.0.0.1:3000/log/v2 fK2PRXYNC3KKmPxc5Nu66/RlRtO6P+PRyZ/gkv+jDQAK9Uu2Cbvkr7yt/c6HPXTEgBKZIg4HJH9tp8DDDosVb5Q3tgo=\n';
const CHECKPOINT_4 =
  'conclave.example/log\n4\nq7bnEFhNrhHxmPCMEAyVtXtGBEjLDo1TbYOCUWJ3PvE=\n\n— conclave.example/log yUUdLkhxb1HSOgYCP1xTzlmqp3PMXq52vYdWCkF6R7Y0S0dmH0rXWQOvyrV5fGpH2xuszR5cbCdd3DOHyICmk3sISwY=\n';
const HASH_A = 'fRcVUc2UCm7f4xiC3Ik7j9Gss7bO3QzYmxXoMkq5s6c=';
const HASH_B = 'qjdkVSKy8KWNQ54w3xn69cb/7xBXdAxHG5pgLYh9LCM=';

const checkpointBody = (description: string) => ({
  'text/plain': {
    schema: {
      type: 'string',
      description: `${description} A C2SP signed note: origin line, tree size, base64 root hash, a blank line, then one "— <name> <base64 signature>" line per signature (the log's, then any witness cosignatures).`,
    },
    example: CHECKPOINT_EXAMPLE,
  },
});

export const LOG_OPENAPI_SCHEMAS: Json = {
  LogCheckpointSizes: {
    type: 'object',
    description: 'A page of the sizes at which checkpoints were published.',
    required: ['sizes', 'next_after'],
    additionalProperties: false,
    properties: {
      sizes: {
        type: 'array',
        description: 'Published tree sizes after the cursor, ascending, at most 1,000.',
        items: { type: 'integer', minimum: 0, description: 'A published tree size.' },
      },
      next_after: {
        type: ['integer', 'null'],
        minimum: 0,
        description: 'The cursor for the next page (pass it as after); null on the last page.',
      },
    },
  },
  LogInclusionProof: {
    type: 'object',
    description: 'An RFC 6962 inclusion proof of one leaf against the checkpoint of a published size.',
    required: ['index', 'tree_size', 'checkpoint', 'inclusion_proof'],
    additionalProperties: false,
    properties: {
      index: count('The leaf index (0-based).'),
      tree_size: count('The size of the checkpoint the proof is against.'),
      checkpoint: { type: 'string', description: 'That checkpoint: a C2SP signed note.' },
      inclusion_proof: base64Hashes('The audit path from the leaf to the root, leaf side first.'),
    },
  },
  LogConsistencyProof: {
    type: 'object',
    description: 'An RFC 6962 consistency proof: the tree of size first is a prefix of the tree of size second.',
    required: ['first', 'second', 'second_checkpoint', 'consistency_proof'],
    additionalProperties: false,
    properties: {
      first: count('The older tree size (any size up to second, published or not).'),
      second: count('The newer, published tree size.'),
      second_checkpoint: { type: 'string', description: 'The checkpoint of size second: a C2SP signed note.' },
      consistency_proof: base64Hashes('The consistency proof hashes (empty when first is 0 or equals second).'),
    },
  },
};

const sizeParameter = (name: string, description: string, required: boolean, example: number) => ({
  name,
  in: 'query',
  required,
  description: `${description} A canonical decimal integer (no sign, no leading zero).`,
  schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
  example: String(example),
});

/**
 * The log's paths; `errors` builds the error responses of the given codes (openapi.ts): the live
 * log under /log/ and the frozen v1 log, read-only, under /log/v1/ (docs/transparency-log.md).
 */
export function logOpenApiPaths(errors: (codes: readonly ErrorCode[]) => Json): Json {
  const live = livePaths(errors);
  const frozen: Json = {};
  for (const [path, item] of Object.entries(live)) {
    const { get: operation } = item as { get: Json & { operationId: string; description: string; responses: Json } };
    const entries = path === '/log/tile/{level}/{index}';
    frozen[path.replace('/log/', '/log/v1/')] = {
      get: {
        ...operation,
        operationId: `${operation.operationId}Frozen`,
        summary: `Frozen v1 log: ${String(operation.summary).replace(/^./, (c) => c.toLowerCase())}`,
        description: `${FROZEN_NOTE}${entries ? ' Its entry bundles (level entries) answer 410: the leaves were whole receipts, which name rooms the read wall hides.' : ''} ${operation.description}`,
        responses: {
          ...operation.responses,
          ...(entries
            ? {
                '410': {
                  description:
                    'Gone (vendor:conclave:not_found): the frozen log’s entry bundles are withheld for good; its hash tiles, checkpoints and proofs are served.',
                  content: { 'application/json': { schema: ref('ErrorEnvelope') } },
                },
              }
            : {}),
        },
      },
    };
  }
  return { ...live, ...frozen };
}

const FROZEN_NOTE =
  'The frozen v1 log, whose leaves were whole receipt JWSs: it no longer grows, and is served only on a service upgraded from it (404 elsewhere; discovery lists it in audit_log.frozen).';

function livePaths(errors: (codes: readonly ErrorCode[]) => Json): Json {
  const reads = errors([
    'input.invalid',
    'vendor:conclave:not_found',
    'rate_limit.exceeded',
    'internal.error',
    'vendor:conclave:unavailable',
  ]);
  const { '413': _noBody, ...readErrors } = reads as Record<string, unknown>;
  const get = (operationId: string, summary: string, description: string, rest: Json): Json => ({
    get: { operationId, summary, description, tags: ['log'], security: [], ...rest },
  });
  return {
    '/log/checkpoint': get(
      'logLatestCheckpoint',
      'The latest signed checkpoint',
      'The newest published checkpoint (Cache-Control: no-cache). 404 until the log has published its first one, a few seconds after start.',
      {
        responses: {
          '200': { description: 'The checkpoint', content: checkpointBody('The latest checkpoint.') },
          ...readErrors,
        },
      },
    ),
    '/log/checkpoint/{size}': get(
      'logCheckpointAt',
      'The checkpoint of one tree size',
      'The checkpoint published at exactly this size (immutable, unless witnesses are configured: they add cosignature lines after publication). 404 for a size that was never published.',
      {
        parameters: [
          {
            name: 'size',
            in: 'path',
            required: true,
            description: 'A published tree size: a canonical decimal integer.',
            schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
            example: '0',
          },
        ],
        responses: {
          '200': { description: 'The checkpoint', content: checkpointBody('The checkpoint of this size.') },
          ...readErrors,
        },
      },
    ),
    '/log/checkpoints': get(
      'logCheckpointSizes',
      'Sizes of every published checkpoint',
      'The sizes at which checkpoints were published, ascending, 1,000 a page: page on with after = next_after until it is null.',
      {
        parameters: [sizeParameter('after', 'Only sizes greater than this; omitted: from the start.', false, 0)],
        responses: {
          '200': {
            description: 'A page of sizes',
            content: {
              'application/json': {
                schema: ref('LogCheckpointSizes'),
                example: { sizes: [1, 2, 4, 7], next_after: null },
              },
            },
          },
          ...readErrors,
        },
      },
    ),
    '/log/tile/{level}/{index}': get(
      'logTile',
      'A hash tile or an entry bundle (C2SP tlog-tiles)',
      'level 0..63: the hash tile of tree level 8·level from hash 256·N: its W hashes (256 when full) of 32 bytes, concatenated. level entries: the entry bundle of leaves 256·N … 256·N+W−1, each a big-endian uint16 length and the leaf’s exact bytes: a commitment to one receipt under its position label (conclave-receipt-commitment/v1, discovery’s audit_log.leaf; an entry over 65,534 bytes would be written as 0xFFFF and a big-endian uint32 length). Full tiles are immutable; a partial tile is served at any width the latest checkpoint covers (max-age=60).',
      {
        parameters: [
          {
            name: 'level',
            in: 'path',
            required: true,
            description: 'The tile level, 0..63, or entries for an entry bundle.',
            schema: { type: 'string', pattern: '^(entries|0|[1-9][0-9]?)$' },
            example: '0',
          },
          {
            name: 'index',
            in: 'path',
            required: true,
            description:
              'The tile index N as C2SP writes it: groups of three digits, all but the last prefixed with x (x001/x234/067), then .p/<W> for a partial tile of width W (1..255). Only the canonical form is served. The slashes are path separators; sent percent-encoded (%2F) they are read the same.',
            schema: { type: 'string', pattern: '^(x[0-9]{3}/){0,5}[0-9]{3}(\\.p/[1-9][0-9]{0,2})?$' },
            example: '000.p/4',
          },
        ],
        responses: {
          '200': {
            description: 'The tile bytes',
            content: {
              'application/octet-stream': {
                schema: {
                  type: 'string',
                  contentMediaType: 'application/octet-stream',
                  description:
                    'Concatenated 32-byte hashes (a hash tile), or length-prefixed entries (an entry bundle).',
                },
                examples: {
                  partialHashTile: {
                    summary: 'A partial hash tile of width 4',
                    description:
                      'GET /log/tile/0/000.p/4 answers the leaf hashes 0..3 of the tree, concatenated: 4 × 32 = 128 bytes (binary, so not shown inline).',
                  },
                },
              },
            },
          },
          ...readErrors,
        },
      },
    ),
    '/log/proof/inclusion': get(
      'logInclusionProof',
      'Inclusion proof of a leaf',
      'Proves that leaf index is in the tree of the published size, against that checkpoint (included, so the proof is checked with the verifier key alone).',
      {
        parameters: [
          sizeParameter('index', 'The leaf index (0-based), below size.', true, 2),
          sizeParameter('size', 'A published tree size.', true, 4),
        ],
        responses: {
          '200': {
            description: 'The proof',
            content: {
              'application/json': {
                schema: ref('LogInclusionProof'),
                example: { index: 2, tree_size: 4, checkpoint: CHECKPOINT_4, inclusion_proof: [HASH_A, HASH_B] },
              },
            },
          },
          ...readErrors,
        },
      },
    ),
    '/log/proof/consistency': get(
      'logConsistencyProof',
      'Consistency proof between two tree sizes',
      'Proves that the tree of size first is a prefix of the published tree of size second, with the second checkpoint.',
      {
        parameters: [
          sizeParameter('first', 'The older tree size, at most second.', true, 2),
          sizeParameter('second', 'A published tree size.', true, 4),
        ],
        responses: {
          '200': {
            description: 'The proof',
            content: {
              'application/json': {
                schema: ref('LogConsistencyProof'),
                example: { first: 2, second: 4, second_checkpoint: CHECKPOINT_4, consistency_proof: [HASH_B] },
              },
            },
          },
          ...readErrors,
        },
      },
    ),
  };
}
