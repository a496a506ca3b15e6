/**
 * The wire types of every request and response. generated.ts is written by scripts/client-types.ts
 * from the operation schemas (the OpenAPI document's components); errors.ts adds the codes only the
 * client produces, receipts.ts the signed receipt payloads, which no REST schema describes.
 */
export type * from './errors.js';
export type * from './generated.js';
export type * from './receipts.js';
