/**
 * The readable verification report of `conclave verify`: the room the receipts are signed for, one
 * line per receipt with what was proven, and what each receipt signs (the decision's winner, the
 * closing statement). Every value printed comes from the signed receipts, never from the outcome
 * body's unsigned copies (docs/receipts.md, Verifying).
 */
import {
  type ChainReport,
  ROOM_NOT_CHECKED,
  type SignedDecisionReport,
  SIGNATURES_NOT_CHECKED,
} from '../client/index.js';

const mark = (value: boolean | null) => (value === null ? '–' : value ? '✓' : '✗');
const NOT_CHECKED = new Set([SIGNATURES_NOT_CHECKED, ROOM_NOT_CHECKED]);

export function formatChainReport(report: ChainReport, source: string): string {
  const lines = [`Receipts of ${source}:`, roomLine(report)];
  for (const r of report.receipts) {
    const what = r.decision_id ? `decision ${r.decision_id}` : 'conclusion';
    lines.push(
      `${r.ok ? '✓' : '✗'} #${r.sequence ?? '?'} ${r.label} (${what}): signature ${mark(r.signature)}  hash ${mark(r.hash)}  link ${mark(r.link)}  replay ${mark(r.replay)}  room ${mark(r.room_match)}  fields ${mark(r.fields_match)}`,
    );
    for (const error of r.errors) lines.push(`    ✗ ${error}`);
    const decision = report.decisions.find((d) => d.label === r.label);
    if (decision) lines.push(`    signed: ${signedDecisionLine(decision)}`);
    if (r.label === 'conclusion' && report.conclusion) {
      const statement = report.conclusion.statement;
      lines.push(`    signed: closing statement ${statement === null ? '(none)' : JSON.stringify(statement)}`);
    }
    // Mandate ballots are attributed to (issuer, sub), not the sub alone (docs/architecture.md, Credentials).
    for (const b of r.ballots.filter((ballot) => ballot.mandate_ref !== null)) {
      const issuer = b.agent_iss === null ? 'issuer not recorded' : `issued by ${b.agent_iss}`;
      lines.push(`    ballot of ${b.agent_id}, ${issuer} (mandate ${b.mandate_ref})`);
    }
  }
  const general = report.errors.filter(
    (e) => !NOT_CHECKED.has(e) && !report.receipts.some((r) => e.startsWith(`${r.label}:`)),
  );
  for (const error of general) lines.push(`✗ ${error}`);
  lines.push(verdict(report));
  return lines.join('\n');
}

/** The signed room, and what it was held to. */
function roomLine(report: ChainReport): string {
  const signed = report.room === null ? 'no receipt names a room' : report.room;
  if (!report.room_checked) return `Signed room: ${signed} (NOT checked against the room you mean)`;
  if (report.room_source === 'from-body') {
    return `Signed room: ${signed} (held to the room the file names for itself, --trust-file-room: this proves the receipts agree with the file, not that it is the room you mean)`;
  }
  return `Signed room: ${signed}`;
}

function signedDecisionLine(d: SignedDecisionReport): string {
  const tallies = Object.entries(d.tallies)
    .map(([option, count]) => `${option} ${count}`)
    .join(', ');
  const winner = d.winner === null ? 'no winner' : `winner ${JSON.stringify(d.winner)}`;
  return `${JSON.stringify(d.question)} → ${winner} (${d.status ?? 'no status'}${tallies ? `; ${tallies}` : ''})`;
}

function verdict(report: ChainReport): string {
  const count = report.receipts.length;
  const room = report.room_source === 'from-body' ? 'the room the file names' : (report.room ?? 'the room');
  if (report.ok) {
    return `✓ ${count} receipt(s) verified for ${room}: every signature against the service's keys, every hash, every link of the chain, every decision's outcome replayed from its signed ballots, and every field shown agrees with what is signed.`;
  }
  if (!report.signatures_checked && report.room_checked && report.chain_ok) {
    return `– ${count} receipt(s) of ${room}: every hash, every link of the chain, every decision's outcome replayed and every field shown agrees with what is signed, but signatures NOT checked (no JWKS): nothing proves the service signed them.`;
  }
  const problems = report.errors.filter((e) => !NOT_CHECKED.has(e)).length;
  const unchecked = [
    report.signatures_checked ? '' : 'signatures not checked (no JWKS)',
    report.room_checked ? '' : 'room not checked (no room given)',
  ].filter(Boolean);
  return `✗ verification FAILED (${problems} problem(s)${unchecked.map((u) => `; ${u}`).join('')}).`;
}
