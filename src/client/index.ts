/**
 * The TypeScript client library: `conclave/client` in the server package, and the standalone
 * package built from this folder (packages/client). Runs unchanged in Node ≥ 20 and in browsers
 * (global fetch, WebCrypto); imports nothing server-only.
 */
export type { BallotByMechanism, ChooseFields, ChooseScoresFields, OptionRef, PointsMechanism } from './ballots.js';
export {
  type Body,
  type Choose,
  ConclaveClient,
  type ConclaveClientOptions,
  type GetRoom,
  type RoomInput,
  type RoomMethod,
} from './client.js';
export { ConclaveError, ConclaveNetworkError } from './errors.js';
export type { StreamedEvent, StreamEventsInput } from './sse.js';
export type { Auth, CallOptions, RetryPolicy } from './transport.js';
export type * from './types/index.js';
export {
  type AgreementReport,
  type AgreementStatus,
  type AgreementVerdict,
  type BallotAttribution,
  ballotAttributions,
  type ChainOptions,
  type ChainReport,
  type CompactReceiptInput,
  type CompactReceiptResult,
  type Jwks,
  publicKeyFromJwks,
  type ReceiptReport,
  ReceiptVerificationError,
  outcomeRoomUrl,
  ROOM_FROM_BODY,
  ROOM_NOT_CHECKED,
  type ReplayReport,
  receiptKid,
  replayReceipt,
  SIGNATURES_NOT_CHECKED,
  type SignedBallot,
  type SignedConclusion,
  type SignedDecision,
  type SignedDecisionReport,
  type VerifiedCompactReceipt,
  verifyAgreementReceiptSemantics,
  verifyCompactReceipt,
  verifyRoomReceiptChain,
} from './verify.js';
export {
  type AuditRoomLogOptions,
  auditRoomLog,
  fetchLogEntries,
  type LogEntry,
  type LogPositionRow,
  type LogPositions,
  type MonitorInput,
  monitorRoomInLog,
  type RoomLogAudit,
  type RoomLogReport,
} from './room-log.js';
export {
  type LogInclusion,
  LogVerificationError,
  type PositionKey,
  type PositionProof,
  positionKeysById,
  type VerifiedCheckpoint,
  verifyCheckpoint,
  verifyConsistency,
  verifyCosignature,
  verifyInclusion,
  verifyPositionLabel,
  verifyReceiptInLog,
} from './tlog.js';
