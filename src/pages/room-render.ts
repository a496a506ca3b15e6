/**
 * The room page's sections as HTML, from the agent view and the outcome body a reader is served.
 * Pure and dependency-light: the server renders the first paint with it, and the page's script
 * (bundled for the browser) re-renders the same sections when the room moves. Every room string
 * passes through escapeHtml (docs/architecture.md, Pages: the visualizer and the room page): nothing a participant writes can become markup.
 */
import { decodeCompact } from '../receipts/compact.js';

// biome-ignore lint/suspicious/noExplicitAny: views are read field by field, as served
type Json = Record<string, any>;

export function escapeHtml(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function when(iso: unknown): string {
  return typeof iso === 'string'
    ? `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>`
    : '';
}

export function headSection(view: Json): string {
  const title = view.decision?.question ?? view.decided?.at?.(-1)?.question ?? `Room ${view.slug}`;
  return `<h1 id="room-title">${escapeHtml(title)}</h1>
<p class="brief">${escapeHtml(view.brief)}</p>
<p>Status: <strong id="room-status" data-status="${escapeHtml(view.status)}">${escapeHtml(view.status)}</strong></p>`;
}

export function currentSection(view: Json): string {
  const decision = view.decision;
  if (!decision) return '<h2>Now</h2><p>No decision is open.</p>';
  const settling = decision.settling
    ? `<p>Settling: seals in ${escapeHtml(decision.settling.seals_in_seconds)} s unless a choice changes the winner (presumptive: ${escapeHtml(decision.settling.presumptive ?? 'none')}).</p>`
    : '';
  const options = (decision.options ?? []).map((option: unknown) => `<li>${escapeHtml(option)}</li>`).join('');
  return `<h2>Now: decision ${escapeHtml(decision.seq)}</h2>
<p class="question">${escapeHtml(decision.question)}</p>
${decision.context ? `<p>${escapeHtml(decision.context)}</p>` : ''}
<h3>Options</h3>
<ol class="options">${options}</ol>
<p>Phase: <strong data-decision-status="${escapeHtml(decision.status)}">${escapeHtml(decision.status)}</strong>; ${escapeHtml(decision.choices_cast ?? 0)} of ${escapeHtml(decision.eligible_voters ?? '?')} have chosen; closes ${when(decision.closes_at)}.</p>
${settling}`;
}

export function discussionSection(view: Json): string {
  const messages: Json[] = Array.isArray(view.discussion) ? view.discussion : [];
  if (messages.length === 0) return '<h2>Discussion</h2><p>Nothing said yet.</p>';
  const items = messages
    .map(
      (m) =>
        `<li><p class="who"><strong>${escapeHtml(m.who)}</strong> ${when(m.at)}${m.decision ? ` · decision ${escapeHtml(m.decision)}` : ''}</p><p class="said">${escapeHtml(m.said)}</p></li>`,
    )
    .join('');
  return `<h2>Discussion</h2><ol class="discussion">${items}</ol>`;
}

/** Tallies as signed in the receipt (what every reader of the outcome may see). */
function signedTallies(jws: unknown): Record<string, number> | null {
  if (typeof jws !== 'string') return null;
  try {
    const tallies = (decodeCompact(jws).payload as Json).svc?.outcome?.tallies;
    return tallies && typeof tallies === 'object' && !Array.isArray(tallies) ? tallies : null;
  } catch {
    return null;
  }
}

function receiptLine(entry: Json): string {
  if (typeof entry.receipt_hash !== 'string') return '';
  return `<p class="receipt">Receipt <code>${escapeHtml(entry.receipt_hash)}</code>: <span class="verification" data-receipt-hash="${escapeHtml(entry.receipt_hash)}" data-receipt-verified="pending" role="status">verifying in your browser…</span></p>`;
}

/** Resolved decisions in seal order, with winner, signed tallies and a receipt slot the script verifies. */
export function decidedSection(outcome: Json): string {
  const decisions: Json[] = (Array.isArray(outcome.decisions) ? outcome.decisions : []).filter(
    (d: Json) => typeof d.receipt_hash === 'string',
  );
  const items = decisions.map((d) => {
    const tallies = signedTallies(d.receipt_jws);
    const table = tallies
      ? `<table class="tallies"><caption>Tallies</caption><thead><tr><th scope="col">Option</th><th scope="col">Count</th></tr></thead><tbody>${Object.entries(
          tallies,
        )
          .map(([option, count]) => `<tr><td>${escapeHtml(option)}</td><td>${escapeHtml(count)}</td></tr>`)
          .join('')}</tbody></table>`
      : '';
    return `<li class="decided" data-decision-id="${escapeHtml(d.id)}"><h3>Decision ${escapeHtml(d.seq)}: ${escapeHtml(d.question)}</h3>
<p>Winner: <strong>${escapeHtml(d.resolved_winner ?? 'none')}</strong> (${escapeHtml(d.outcome_status ?? d.resolved_outcome)}), resolved ${when(d.resolved_at)}</p>
${table}${receiptLine(d)}</li>`;
  });
  const conclusion = outcome.conclusion;
  if (conclusion && typeof conclusion.receipt_hash === 'string') {
    items.push(`<li class="decided conclusion"><h3>Conclusion</h3>
<p>${escapeHtml(conclusion.closing_statement ?? 'The room was closed.')} ${when(conclusion.concluded_at)}</p>
${receiptLine(conclusion)}</li>`);
  }
  if (items.length === 0) return '<h2>Decided</h2><p>Nothing decided yet.</p>';
  return `<h2>Decided</h2><ul class="decided-list">${items.join('')}</ul>`;
}

/** The whole readable body of a public room's page; each section re-rendered in place when the room moves. */
export function roomSections(view: Json, outcome: Json): Record<'head' | 'now' | 'discussion' | 'decided', string> {
  return {
    head: headSection(view),
    now: currentSection(view),
    discussion: discussionSection(view),
    decided: decidedSection(outcome),
  };
}
