/**
 * The room page's sections as HTML, from what a reader is served: the agent view, the outcome body
 * and, for a seated reader, the full view (`?include=full`, for choice reasons). Pure and
 * dependency-light: the server renders the first paint with it, and the page's script (bundled for
 * the browser) re-renders the same sections when the room moves. Every room string passes through
 * escapeHtml: nothing a participant writes can become markup. Nothing is shown that the views do not
 * already give this reader, so choice_visibility holds on the page as it does on the API.
 */
import { replayTrace } from '../mechanisms/replay.js';
import { decodeCompact } from '../receipts/compact.js';

// biome-ignore lint/suspicious/noExplicitAny: views are read field by field, as served
type Json = Record<string, any>;

export function escapeHtml(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function when(iso: unknown): string {
  return typeof iso === 'string'
    ? `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>`
    : '';
}

/**
 * A ballot as a person reads it: the option, "1. a, 2. b" for a ranking, "a, b" for an approval
 * ballot (a set: its order means nothing), "a: 5, b: 1" for scores.
 */
export function ballotWords(choice: unknown, mechanism = ''): string {
  if (typeof choice !== 'string') return ballotValueWords(choice, mechanism);
  if (!choice.startsWith('[') && !choice.startsWith('{')) return choice;
  try {
    return ballotValueWords(JSON.parse(choice), mechanism);
  } catch {
    return choice;
  }
}

function ballotValueWords(value: unknown, mechanism: string): string {
  if (Array.isArray(value)) {
    return mechanism === 'approval'
      ? value.map(String).join(', ')
      : value.map((v, i) => `${i + 1}. ${String(v)}`).join(', ');
  }
  if (value && typeof value === 'object') {
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join(', ');
  }
  return String(value ?? '');
}

export function headSection(view: Json): string {
  const title = view.decision?.question ?? view.decided?.at?.(-1)?.question ?? `Room ${view.slug}`;
  return `<h1 id="room-title">${escapeHtml(title)}</h1>
${view.about ? `<p class="about">${escapeHtml(view.about)}</p>` : ''}
<p class="brief">${escapeHtml(view.brief)}</p>
<p>Status: <strong id="room-status" data-status="${escapeHtml(view.status)}">${escapeHtml(view.status)}</strong></p>`;
}

const VISIBILITY_WORDS: Record<string, string> = {
  after_decided: 'Choices are shown once the decision is decided.',
  never: 'This room never shows who chose what.',
};

/** Reasons given with ballots, by display name (the full view carries them; the agent view does not). */
function reasonsByName(full: Json | null): Map<string, string> {
  const names = new Map<string, string>(
    (full?.participants ?? []).map((p: Json) => [String(p.id), String(p.display_name)]),
  );
  const reasons = new Map<string, string>();
  for (const vote of full?.votes ?? []) {
    const name = names.get(String(vote.participant_id));
    if (name && typeof vote.rationale === 'string' && vote.rationale) reasons.set(name, vote.rationale);
  }
  return reasons;
}

function choicesList(view: Json, full: Json | null): string {
  if (!Array.isArray(view.choices)) {
    return `<p class="muted">${escapeHtml(VISIBILITY_WORDS[view.rules?.choices_visible] ?? 'Choices are not shown.')}</p>`;
  }
  if (view.choices.length === 0) return '<p>No choices yet.</p>';
  const reasons = reasonsByName(full);
  const items = view.choices
    .map((c: Json) => {
      const reason = reasons.get(String(c.who));
      return `<li><strong>${escapeHtml(c.who)}</strong> chose <span class="choice">${escapeHtml(ballotWords(c.choice, full?.config?.mechanism))}</span>${reason ? ` — “${escapeHtml(reason)}”` : ''} ${when(c.at)}</li>`;
    })
    .join('');
  return `<ul class="choices-list" id="choices">${items}</ul>`;
}

export function currentSection(view: Json, full: Json | null = null): string {
  const decision = view.decision;
  if (!decision) return '<h2>Now</h2><p>No decision is open.</p>';
  const settling = decision.settling
    ? `<p id="settling">Settling: the result seals in <span class="countdown" data-seconds="${escapeHtml(decision.settling.seals_in_seconds)}">${escapeHtml(decision.settling.seals_in_seconds)} s</span> unless a choice changes the winner (leading: ${escapeHtml(decision.settling.presumptive ?? 'none')}).</p>`
    : '';
  const proposers: (string | null)[] = decision.option_proposers ?? [];
  const options = (decision.options ?? [])
    .map(
      (option: unknown, i: number) =>
        `<li>${escapeHtml(option)}${proposers[i] ? ` <span class="muted">(proposed by ${escapeHtml(proposers[i])})</span>` : ''}</li>`,
    )
    .join('');
  const waiting: string[] = view.roster?.waiting_for ?? [];
  const abstentions = (view.abstentions ?? [])
    .map((a: Json) => `<li><strong>${escapeHtml(a.who)}</strong> abstained: “${escapeHtml(a.reason)}”</li>`)
    .join('');
  const agreement = decision.agreement
    ? '<p class="note"><strong>Agreement:</strong> this passes only if everyone eligible accepts the same option.</p>'
    : '';
  return `<h2>Now: decision ${escapeHtml(decision.seq)}</h2>
<p class="question">${escapeHtml(decision.question)}</p>
${decision.context ? `<div class="context"><h3>Context</h3><p>${escapeHtml(decision.context)}</p></div>` : ''}
${agreement}<h3>Options</h3>
${options ? `<ol class="options">${options}</ol>` : '<p>No options yet: participants can propose them.</p>'}
<p>Phase: <strong data-decision-status="${escapeHtml(decision.status)}">${escapeHtml(decision.status)}</strong>; <span id="chosen-count">${escapeHtml(decision.choices_cast ?? 0)} of ${escapeHtml(decision.eligible_voters ?? '?')}</span> have chosen; closes ${when(decision.closes_at)}.</p>
${settling}
<p id="waiting">${waiting.length ? `Not chosen yet: ${waiting.map((w) => `<strong>${escapeHtml(w)}</strong>`).join(', ')}` : 'Everyone eligible has chosen.'}</p>
<h3>Choices</h3>
${choicesList(view, full)}
${abstentions ? `<h3>Abstentions</h3><ul>${abstentions}</ul>` : ''}`;
}

const STANCE_WORDS: Record<string, string> = {
  agree: 'agrees',
  disagree: 'disagrees',
  clarify: 'clarifies',
  extend: 'extends',
};

export function discussionSection(view: Json): string {
  const messages: Json[] = Array.isArray(view.discussion) ? view.discussion : [];
  if (messages.length === 0) return '<h2>Discussion</h2><p>Nothing said yet.</p>';
  const items = messages
    .map(
      (m) =>
        `<li><p class="who"><strong>${escapeHtml(m.who)}</strong>${m.stance ? ` <span class="stance">${escapeHtml(STANCE_WORDS[m.stance] ?? m.stance)}</span>` : ''} ${when(m.at)}${m.decision ? ` · decision ${escapeHtml(m.decision)}` : ''}</p><p class="said">${escapeHtml(m.said)}</p></li>`,
    )
    .join('');
  return `<h2>Discussion</h2>${view.discussion_earlier ? `<p class="muted">${escapeHtml(view.discussion_earlier)} earlier messages are not shown.</p>` : ''}<ol class="discussion">${items}</ol>`;
}

/** What a decision receipt signs (null when the JWS cannot be read). */
function receiptClaims(jws: unknown): Json | null {
  if (typeof jws !== 'string') return null;
  try {
    return decodeCompact(jws).payload as Json;
  } catch {
    return null;
  }
}

/**
 * Counts as bars, highest first (slate order among equals), with the winner marked. Counts are shown
 * with their share of the total; approval counts with the share of the voters who approved (a
 * voter approves several options, so shares of all approvals would read as less than they are);
 * Schulze scores (net head-to-head wins, possibly negative) have no share, so their bars span the
 * lowest to the highest score instead.
 */
export function tallyBars(
  tallies: Record<string, number>,
  winner: string | null,
  label: string,
  scale: 'share' | 'net' | { voters: number } = 'share',
): string {
  const entries = Object.entries(tallies).sort((a, b) => b[1] - a[1]);
  const total =
    typeof scale === 'object' ? scale.voters : entries.reduce((sum, [, count]) => sum + Math.max(0, count), 0);
  const high = entries[0]?.[1] ?? 0;
  const low = entries.at(-1)?.[1] ?? 0;
  const items = entries
    .map(([option, count]) => {
      const pct = total > 0 ? Math.round((Math.max(0, count) / total) * 1000) / 10 : 0;
      const bar = scale !== 'net' ? pct : high > low ? Math.round(((count - low) / (high - low)) * 100) : 100;
      const words =
        scale === 'net'
          ? `${count} net`
          : typeof scale === 'object'
            ? `${count} of ${total} voters (${pct}%)`
            : `${count} (${pct}%)`;
      const won = option === winner;
      return `<li data-option="${escapeHtml(option)}" data-count="${escapeHtml(count)}"${won ? ' class="winner"' : ''}><span class="opt">${won ? '✓ ' : ''}${escapeHtml(option)}${won ? ' <span class="tag">winner</span>' : ''}</span><progress max="100" value="${bar}" aria-label="${escapeHtml(option)}: ${escapeHtml(words)}"></progress><span class="count">${escapeHtml(words)}</span></li>`;
    })
    .join('');
  return `<ol class="bars" aria-label="${escapeHtml(label)}">${items}</ol>`;
}

function roundsList(trace: Json): string {
  const rounds: Json[] = Array.isArray(trace.rounds) ? trace.rounds : [];
  if (rounds.length === 0) return '';
  const items = rounds
    .map((round, i) => {
      const eliminated: string[] = round.eliminated ?? [];
      const exhausted = Number(round.exhausted_ballots ?? 0);
      return `<li class="round"><h5>Round ${i + 1}</h5>${tallyBars(round.tally ?? {}, null, `Round ${i + 1}`)}<p>${
        eliminated.length
          ? `Eliminated: ${eliminated.map((e) => `<strong>${escapeHtml(e)}</strong>`).join(', ')}; its ballots move to their next choice.`
          : 'No elimination: the count ends here.'
      }${exhausted > 0 ? ` ${exhausted} ballot(s) exhausted.` : ''}</p></li>`;
    })
    .join('');
  return `<h4>Rounds</h4><ol class="rounds">${items}</ol>`;
}

function pairwiseMatrix(trace: Json, options: string[]): string {
  const d = trace.pairwise_preferences;
  if (!d || typeof d !== 'object' || options.length === 0) return '';
  const cell = (a: string, b: string) => (a === b ? '—' : escapeHtml(d[a]?.[b] ?? 0));
  const head = options.map((o) => `<th scope="col">${escapeHtml(o)}</th>`).join('');
  const rows = options
    .map(
      (a) => `<tr><th scope="row">${escapeHtml(a)}</th>${options.map((b) => `<td>${cell(a, b)}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<h4>Head to head</h4><table class="matrix"><caption>Ballots preferring the row option to the column option</caption><thead><tr><th scope="col">Preferred</th>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

function receiptLine(entry: Json): string {
  if (typeof entry.receipt_hash !== 'string') return '';
  return `<p class="receipt">Receipt <code>${escapeHtml(entry.receipt_hash)}</code>: <span class="verification" data-receipt-hash="${escapeHtml(entry.receipt_hash)}" data-receipt-verified="pending" role="status">verifying in your browser…</span> <span class="log-inclusion" data-log-receipt="${escapeHtml(entry.receipt_hash)}" data-log-verified="pending" role="status">transparency log: checking in your browser…</span> <span class="signed-values" data-receipt-signed="${escapeHtml(entry.receipt_hash)}" hidden></span></p>`;
}

/** One resolved decision: winner, the signed tallies as bars, the count's rounds or matrix, the receipt slot. */
function decidedItem(d: Json, full: Json | null): string {
  const claims = receiptClaims(d.receipt_jws);
  const svc: Json = claims?.svc ?? {};
  const tallies = svc.outcome?.tallies;
  const kind = String(svc.mechanism?.kind ?? '');
  const winner = d.resolved_winner ?? null;
  const voters = Number(svc.outcome?.diagnostics?.cast_votes ?? 0);
  const scale = kind === 'ranked_pairwise' ? 'net' : kind === 'approval' ? { voters } : 'share';
  const bars =
    tallies && typeof tallies === 'object' && !Array.isArray(tallies)
      ? `<h4>${kind === 'ranked_choice' ? 'Final round' : kind === 'ranked_pairwise' ? 'Head-to-head wins minus losses' : kind === 'approval' ? 'Approvals' : 'Tally'}</h4>${tallyBars(tallies, winner, 'Tally', scale)}`
      : '';
  const trace = claims && (kind === 'ranked_choice' || kind === 'ranked_pairwise') ? replayTrace(claims) : null;
  const counting =
    kind === 'ranked_choice' || kind === 'ranked_pairwise'
      ? trace
        ? kind === 'ranked_choice'
          ? roundsList(trace)
          : pairwiseMatrix(trace, d.options ?? [])
        : '<p class="muted">The count cannot be shown step by step: this receipt lists no ballots.</p>'
      : '';
  const abstentions: Json[] = Array.isArray(svc.abstentions) ? svc.abstentions : [];
  return `<li class="decided" data-decision-id="${escapeHtml(d.id)}" data-mechanism="${escapeHtml(kind)}"><h3>Decision ${escapeHtml(d.seq)}: ${escapeHtml(d.question)}</h3>
<p>Winner: <strong>${escapeHtml(winner ?? 'none')}</strong> (${escapeHtml(d.outcome_status ?? d.resolved_outcome)}), resolved ${when(d.resolved_at)}${svc.outcome?.diagnostics ? `; ${escapeHtml(svc.outcome.diagnostics.cast_votes)} of ${escapeHtml(svc.outcome.diagnostics.eligible_voters)} chose` : ''}${abstentions.length ? `, ${abstentions.length} abstained` : ''}</p>
${bars}${sealedChoices(svc, d, full, kind)}${counting}${receiptLine(d)}</li>`;
}

/**
 * Who chose what on a sealed decision, and why, as its receipt lists the ballots: none when the room
 * never shows choices (the receipt then lists none), names from the full view's seats, and the
 * reasons the full view keeps for the latest sealed decision. Abstentions are always listed.
 */
function sealedChoices(svc: Json, d: Json, full: Json | null, kind: string): string {
  const votes: Json[] = Array.isArray(svc.votes) ? svc.votes : [];
  const abstentions: Json[] = Array.isArray(svc.abstentions) ? svc.abstentions : [];
  const names = new Map<string, string>(
    (full?.participants ?? []).map((p: Json) => [`participant:${p.id}`, String(p.display_name)]),
  );
  const active = full && full.active_decision_id === d.id;
  const reasons = new Map<string, string>(
    (active ? (full.votes ?? []) : [])
      .filter((v: Json) => typeof v.rationale === 'string' && v.rationale)
      .map((v: Json) => [`participant:${v.participant_id}`, String(v.rationale)]),
  );
  const who = (id: unknown) => escapeHtml(names.get(String(id)) ?? 'a member');
  const items = votes.map((v) => {
    const reason = reasons.get(String(v.agent_id));
    return `<li><strong>${who(v.agent_id)}</strong> chose <span class="choice">${escapeHtml(ballotWords(v.choice, kind))}</span>${reason ? ` — “${escapeHtml(reason)}”` : ''}</li>`;
  });
  for (const a of abstentions) {
    items.push(`<li><strong>${who(a.agent_id)}</strong> abstained: “${escapeHtml(a.reason)}”</li>`);
  }
  const hidden =
    votes.length === 0 && Number(svc.outcome?.diagnostics?.cast_votes ?? 0) > 0
      ? '<p class="muted">This room never shows who chose what.</p>'
      : '';
  return items.length || hidden
    ? `<h4>Choices</h4>${hidden}${items.length ? `<ul class="choices-list sealed-choices">${items.join('')}</ul>` : ''}`
    : '';
}

/** Resolved decisions in seal order, with winner, signed tallies and a receipt slot the script verifies. */
export function decidedSection(outcome: Json, full: Json | null = null): string {
  const decisions: Json[] = (Array.isArray(outcome.decisions) ? outcome.decisions : []).filter(
    (d: Json) => typeof d.receipt_hash === 'string',
  );
  const items = decisions.map((d) => decidedItem(d, full));
  const conclusion = outcome.conclusion;
  if (conclusion && typeof conclusion.receipt_hash === 'string') {
    items.push(`<li class="decided conclusion"><h3>Conclusion</h3>
<p id="closing-statement">${escapeHtml(conclusion.closing_statement ?? 'The room was closed.')} ${when(conclusion.concluded_at)}</p>
${receiptLine(conclusion)}</li>`);
  }
  if (items.length === 0) return '<h2>Decided</h2><p>Nothing decided yet.</p>';
  return `<h2>Decided</h2><ul class="decided-list">${items.join('')}</ul>`;
}

/** The whole readable body of a room's page; each section re-rendered in place when the room moves. */
export function roomSections(
  view: Json,
  outcome: Json,
  full: Json | null = null,
): Record<'head' | 'now' | 'discussion' | 'decided', string> {
  return {
    head: headSection(view),
    now: currentSection(view, full),
    discussion: discussionSection(view),
    decided: decidedSection(outcome, full),
  };
}
