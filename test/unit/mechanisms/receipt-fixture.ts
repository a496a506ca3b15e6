/** Builds decoded decision-receipt payloads (05 §2) the way the service would seal them. */
import { ballotText } from '../../../src/domain/ballots.js';
import {
  type CanonicalBallot,
  type EngineInput,
  engineParameters,
  engineVote,
  type MechanismName,
  receiptOutcome,
  runMechanism,
} from '../../../src/mechanisms/index.js';
import { jcs } from '../../../src/mechanisms/tie-break.js';

export interface DecisionSetup {
  kind: MechanismName;
  options: string[];
  ballots: [agentId: string, ballot: CanonicalBallot][];
  abstainers?: string[];
  eligibleVoters: number;
  quorumFraction?: number;
  agreement?: boolean;
  decisionId?: string;
}

export function engineInputFor(setup: DecisionSetup): EngineInput {
  return {
    parameters: engineParameters(setup.kind, {
      options: setup.options,
      quorumFraction: setup.quorumFraction ?? 0,
      agreement: setup.agreement ?? false,
    }),
    eligible_voters: setup.eligibleVoters,
    votes: setup.ballots.map(([agentId, ballot]) => engineVote(setup.kind, agentId, ballot)),
    participating_voters: setup.ballots.length + (setup.abstainers?.length ?? 0),
    deterministic_seed: setup.decisionId ?? 'b3f1c2de-0000-4000-8000-000000000001',
  };
}

export interface VoteSummary {
  agent_id: string;
  /** The issuer of a mandate-cast ballot (absent on token ballots). */
  agent_iss?: string;
  choice: string;
  weight?: number;
  cast_at: string;
  mandate_ref: string | null;
  signature: null;
}

export interface ReceiptPayload {
  iss: string;
  svc: {
    decision_id: string | null;
    decision_kind: string;
    mechanism: { kind: string; parameters: Record<string, unknown> } | null;
    votes: VoteSummary[];
    abstentions: { agent_id: string; reason: string; declared_at: string }[];
    overrides: unknown[];
    outcome: {
      status: string;
      winning_option: string | null;
      tallies: Record<string, number>;
      diagnostics: { cast_votes: number; eligible_voters: number };
    };
  };
}

/** A payload as a verifier sees it after decoding the JWS: JSON-parsed from its JCS text. */
export function receiptPayload(setup: DecisionSetup): ReceiptPayload {
  const input = engineInputFor(setup);
  const abstainers = setup.abstainers ?? [];
  const responses = setup.ballots.length + abstainers.length;
  const hasSlate = setup.options.length > 0;
  const output = hasSlate ? runMechanism(setup.kind, input) : null;
  const outcome = output
    ? receiptOutcome(output, responses)
    : { status: 'no_quorum', winning_option: null, tallies: {} };
  const payload: ReceiptPayload = {
    iss: 'https://conclave.test/r/room',
    svc: {
      decision_id: input.deterministic_seed,
      decision_kind: 'standing',
      mechanism: {
        kind: setup.kind,
        parameters: {
          question: 'Which option?',
          ...(setup.agreement ? { agreement: true } : {}),
          ...input.parameters,
        },
      },
      votes: setup.ballots.map(([agentId, ballot], i) => ({
        agent_id: agentId,
        choice: ballotText(ballot),
        weight: 1,
        cast_at: new Date(Date.UTC(2026, 4, 1, 10, i)).toISOString(),
        mandate_ref: null,
        signature: null,
      })),
      abstentions: abstainers.map((agentId) => ({
        agent_id: agentId,
        reason: 'conflict of interest',
        declared_at: '2026-05-01T10:30:00.000Z',
      })),
      overrides: [],
      outcome: {
        ...outcome,
        diagnostics: {
          cast_votes: output?.cast_votes ?? 0,
          eligible_voters: output?.eligible_voters ?? setup.eligibleVoters,
        },
      },
    },
  };
  return JSON.parse(jcs(payload)) as ReceiptPayload;
}
