/**
 * Who a ballot counts for (docs/mechanisms.md, Voters; docs/architecture.md, Credentials). A mandate
 * seat is (room, issuer, subject), so two issuers naming one subject are two voters, and the engine's
 * `voter_id` (which finds a voter's repeated ballots) must tell them apart: a ballot that carries its
 * issuer (`agent_iss`) counts for the pair, written as the JSON text `["<agent_iss>","<agent_id>"]`;
 * a ballot without one (token-cast `participant:<id>`, or signed before ballots carried the issuer)
 * counts for its `agent_id`. JSON keeps the pair unambiguous whatever the subject holds, and a pair
 * (it begins with `[`) never equals a token ballot's `participant:<id>`. Pure: the service's count
 * and every reader's replay share it.
 */
export function voterIdOf(agentId: string, agentIss: string | null | undefined): string {
  return agentIss == null ? agentId : JSON.stringify([agentIss, agentId]);
}

/**
 * Engine order of ballots cast in the same instant: by `agent_id`, then by issuer (a ballot without
 * one first), so one subject's ballots from two issuers still have one order.
 */
export function compareVoters(
  a: { agentId: string; agentIss?: string | null | undefined },
  b: { agentId: string; agentIss?: string | null | undefined },
): number {
  if (a.agentId !== b.agentId) return a.agentId < b.agentId ? -1 : 1;
  const ai = a.agentIss ?? '';
  const bi = b.agentIss ?? '';
  return ai < bi ? -1 : ai > bi ? 1 : 0;
}

/**
 * The engine's `voter_id` of each ballot of one decision, in order. A subject that only one issuer
 * (or only token ballots) voted under keeps its plain `agent_id`, so the count's trace (per-voter
 * credits, repeated voters) reads as it always has; only a subject that ballots of two issuers name is
 * written as the pair of `voterIdOf`, which keeps the two voters apart. The service's count and every
 * reader's replay derive it from the same list of ballots, so both agree.
 */
export function engineVoterIds(
  ballots: readonly { agentId: string; agentIss?: string | null | undefined }[],
): string[] {
  const issuers = new Map<string, Set<string | null>>();
  for (const { agentId, agentIss } of ballots) {
    const seen = issuers.get(agentId) ?? new Set<string | null>();
    seen.add(agentIss ?? null);
    issuers.set(agentId, seen);
  }
  return ballots.map(({ agentId, agentIss }) =>
    (issuers.get(agentId)?.size ?? 0) > 1 ? voterIdOf(agentId, agentIss) : agentId,
  );
}
