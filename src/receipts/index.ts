export { nextAuditHash } from './audit.js';
export { base64urlDecodeStrict, base64urlEncode } from './base64url.js';
export { didKeyFromPublicKey, publicKeyFromDidKey } from './did-key.js';
export { RECEIPT_HASH_PATTERN, receiptHash } from './hash.js';
export { canonicalJson, sha256Hex } from './jcs.js';
export {
  checkJwsHeader,
  type DecodedJws,
  decodeCompact,
  type JoseHeader,
  JwsError,
  type JwsFailure,
  type JwsPayload,
  MANDATE_TYP,
  RECEIPT_TYP,
} from './compact.js';
export { receiptHeader, signCompact, verifyCompactJws, verifyCompactReceipt } from './jws.js';
export { Keyring, type LoadKeyringOptions, loadKeyring } from './keyring.js';
export {
  generateSigningKey,
  jwkThumbprint,
  type PublicJwk,
  publicJwk,
  rawPublicKey,
  type SigningKey,
  seedOf,
  signingKeyFromSeed,
  type VerificationKey,
  verificationKeyFromX,
} from './keys.js';
export { buildMerkleRoot } from './merkle.js';
export {
  buildConclusionReceiptPayload,
  buildDecisionReceiptPayload,
  type ConclusionReceiptInput,
  type ConclusionReceiptPayload,
  type DecisionReceiptInput,
  type DecisionReceiptPayload,
  type ReceiptAbstention,
  type ReceiptMechanism,
  type ReceiptOutcome,
  type ReceiptOutcomeStatus,
  type ReceiptPayload,
  type ReceiptVote,
  type ReceiptWindows,
  signReceipt,
} from './payload.js';
export {
  type ChainCheck,
  publicKeyFromJwks,
  receiptKid,
  verifyOutcomeSignatures,
  verifyRoomReceiptChain,
} from './verify.js';
