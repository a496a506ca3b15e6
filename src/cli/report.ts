/** The readable verification report of `conclave verify`: one line per receipt, what was proven. */
import { type ChainReport, SIGNATURES_NOT_CHECKED } from '../client/index.js';

const mark = (value: boolean | null) => (value === null ? '–' : value ? '✓' : '✗');

export function formatChainReport(report: ChainReport, source: string): string {
  const lines = [`Receipts of ${source}:`];
  for (const r of report.receipts) {
    const what = r.decision_id ? `decision ${r.decision_id}` : 'conclusion';
    lines.push(
      `${r.ok ? '✓' : '✗'} #${r.sequence ?? '?'} ${r.label} (${what}): signature ${mark(r.signature)}  hash ${mark(r.hash)}  link ${mark(r.link)}  replay ${mark(r.replay)}`,
    );
    for (const error of r.errors) lines.push(`    ✗ ${error}`);
    // Mandate ballots are attributed to (issuer, sub), not the sub alone (docs/architecture.md, Credentials).
    for (const b of r.ballots.filter((ballot) => ballot.mandate_ref !== null)) {
      const issuer = b.agent_iss === null ? 'issuer not recorded' : `issued by ${b.agent_iss}`;
      lines.push(`    ballot of ${b.agent_id}, ${issuer} (mandate ${b.mandate_ref})`);
    }
  }
  const general = report.errors.filter(
    (e) => e !== SIGNATURES_NOT_CHECKED && !report.receipts.some((r) => e.startsWith(`${r.label}:`)),
  );
  for (const error of general) lines.push(`✗ ${error}`);
  lines.push(verdict(report));
  return lines.join('\n');
}

function verdict(report: ChainReport): string {
  const count = report.receipts.length;
  if (report.ok) {
    return `✓ ${count} receipt(s) verified: every signature against the service's keys, every hash, every link of the chain, and every decision's outcome replayed from its signed ballots.`;
  }
  if (!report.signatures_checked && report.chain_ok) {
    return `– ${count} receipt(s): every hash, every link of the chain and every decision's outcome replayed, but signatures NOT checked (no JWKS): nothing proves the service signed them.`;
  }
  const problems = report.errors.filter((e) => e !== SIGNATURES_NOT_CHECKED).length;
  const unsigned = report.signatures_checked ? '' : '; signatures not checked (no JWKS)';
  return `✗ verification FAILED (${problems} problem(s)${unsigned}).`;
}
