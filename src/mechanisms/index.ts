/** Public surface of the mechanisms: pure tally engines, lock checks, status mapping and replay. */
export {
  engineFamily,
  engineParameters,
  engineVote,
  isMechanismName,
  RESERVED_MECHANISMS,
  supportsAgreement,
  takesSingleChoice,
  WIRED_MECHANISMS,
} from './catalog.js';
export { runEngine, runMechanism } from './engine.js';
export { isLocked } from './lock.js';
export { jsKeyOrder } from './ordering.js';
export { type AgreementReport, type ReplayReport, replayReceipt, verifyAgreementReceiptSemantics } from './replay.js';
export { compareVoters, engineVoterIds, voterIdOf } from './voters.js';
export { type ReceiptOutcome, type ReceiptStatus, receiptOutcome, receiptStatus } from './status.js';
export type {
  CanonicalBallot,
  EngineFamily,
  EngineInput,
  EngineOutput,
  MechanismName,
  Outcome,
  TieBreak,
} from './types.js';
