/**
 * `conclave/client`: the TypeScript client library. Runs unchanged in Node ≥ 20 and in browsers
 * (global fetch, WebCrypto); imports nothing server-only.
 */
export { type Body, ConclaveClient, type ConclaveClientOptions, type ResponseOf, type RoomInput } from './client.js';
export { ConclaveError, ConclaveNetworkError } from './errors.js';
export type { RoomEvent, StreamEventsInput } from './sse.js';
export type { Auth, CallOptions } from './transport.js';
export {
  type AgreementReport,
  type BallotAttribution,
  ballotAttributions,
  type ChainReport,
  type Jwks,
  publicKeyFromJwks,
  type ReceiptReport,
  ReceiptVerificationError,
  type ReplayReport,
  receiptKid,
  replayReceipt,
  verifyAgreementReceiptSemantics,
  verifyCompactReceipt,
  verifyRoomReceiptChain,
} from './verify.js';
export {
  type LogInclusion,
  LogVerificationError,
  type VerifiedCheckpoint,
  verifyCheckpoint,
  verifyConsistency,
  verifyCosignature,
  verifyInclusion,
  verifyReceiptInLog,
} from './tlog.js';
