/**
 * The host's hold on the open decision (docs/how-decisions-end.md): "end voting now" once everyone
 * eligible has chosen, and "end this decision now" for one opened by mistake. Neither is a new act:
 * both use the room's settings — early close with no settle window, so a determined outcome seals at
 * once — and, for members who have not chosen, the member role endpoint (observers are not counted),
 * then put the settings and roles back. Every step is a room event the members see, and the sealed
 * receipt is the honest count of the ballots cast; no decision is ever canceled.
 */
import { escapeHtml } from '../room-render.js';
import { api, type Json } from './api.js';
import { plainMessage } from './form-errors.js';
import type { RoomContext } from './room-act.js';

const VOTING = new Set(['voting', 'settling', 'open']);

/** Who the open decision still waits for, as seats the host can take out of its count (pending invites are not seats). */
function outstandingSeats(ctx: RoomContext): Json[] {
  const waiting = new Set<string>(ctx.view.roster?.waiting_for ?? []);
  return (ctx.full.participants ?? []).filter(
    (p: Json) => p.role === 'participant' && p.id !== ctx.seat.participantId && waiting.has(String(p.display_name)),
  );
}

function hostIsWaited(ctx: RoomContext): boolean {
  const me = (ctx.full.participants ?? []).find((p: Json) => p.id === ctx.seat.participantId);
  return me !== undefined && (ctx.view.roster?.waiting_for ?? []).includes(String(me.display_name));
}

/** A key for what the panel shows: rebuilt only when it changes, so a click's message survives updates. */
function panelKey(ctx: RoomContext): string {
  const d = ctx.view.decision;
  return JSON.stringify([
    d?.seq,
    d?.status,
    d?.options?.length,
    d?.choices_cast,
    ctx.view.roster?.waiting_for,
    ctx.view.status,
  ]);
}

/**
 * Seals the open decision now. Early close with settle window 0 seals a determined outcome within the
 * settings change (docs/how-decisions-end.md, With early close); when some eligible members have not
 * chosen, they leave the count for that moment (the host abstains when nobody has responded, since
 * early close needs one response), and everything is restored afterwards.
 */
async function endNow(ctx: RoomContext): Promise<string> {
  const { slug, seat, full } = ctx;
  const d = ctx.view.decision;
  const before = { early_close: full.config?.early_close, settle_window: full.config?.settle_window };
  // A slate opened by mistake is frozen first: only a decision that is choosing can seal early.
  if (d.status === 'proposing') await api('POST', `/api/rooms/${slug}/start-choosing`, { decision: d.seq }, seat.token);
  const outstanding = outstandingSeats(ctx);
  const responses = Number(d.choices_cast ?? 0) + (ctx.view.abstentions ?? []).length;
  if (hostIsWaited(ctx)) {
    await api(
      'POST',
      `/api/rooms/${slug}/abstain`,
      { decision: d.seq, reason: 'The host ended voting without choosing.' },
      seat.token,
    );
  } else if (responses === 0) {
    throw new Error(
      'Nobody has chosen yet and you do not vote in this room, so there is no response to end on: the decision ends when its voting window closes.',
    );
  }
  const member = (p: Json, role: string) =>
    api('PATCH', `/api/rooms/${slug}/members/${encodeURIComponent(p.id)}`, { role }, seat.token);
  try {
    for (const p of outstanding) await member(p, 'observer');
    await api(
      'PATCH',
      `/api/rooms/${slug}/settings`,
      { settings: { early_close: true, settle_window: 0 } },
      seat.token,
    );
  } finally {
    for (const p of outstanding) await member(p, 'participant');
    if (before.early_close !== true || before.settle_window !== 0) {
      await api('PATCH', `/api/rooms/${slug}/settings`, { settings: before }, seat.token);
    }
  }
  const after = await api('GET', `/api/rooms/${slug}`, undefined, seat.token);
  ctx.refresh();
  if (after.decision?.seq === d.seq) {
    throw new Error(
      'Voting could not end yet: the room still waits for people invited who have not joined. Revoke their invites, or wait for them.',
    );
  }
  return 'Voting has ended: the decision is sealed with the choices made.';
}

/** The panel inside the host controls; rebuilt when the open decision's progress changes. */
export function renderHostDecision(root: HTMLElement, ctx: RoomContext): void {
  const key = panelKey(ctx);
  if (root.dataset.key === key) return;
  root.dataset.key = key;
  const d = ctx.view.decision;
  const slate = d?.status === 'proposing' && (d.options ?? []).length > 0;
  if (!d || !(VOTING.has(String(d.status)) || slate) || ctx.view.status === 'concluded') {
    root.innerHTML = '';
    return;
  }
  const waiting: string[] = ctx.view.roster?.waiting_for ?? [];
  const progress = `${escapeHtml(d.choices_cast ?? 0)} of ${escapeHtml(d.eligible_voters ?? '?')} have chosen`;
  const everyone = waiting.length === 0;
  root.innerHTML = everyone
    ? `<div class="panel" id="end-voting-panel"><h3>Everyone has chosen</h3><p>${progress}. End voting now to seal the result and sign its receipt.</p>
<button type="button" id="end-voting">End voting now</button></div>`
    : `<details class="panel" id="end-decision-panel"><summary>End this decision now (${progress})</summary>
<p>${slate ? 'The slate is frozen and ' : ''}Voting ends at once with the choices made so far; the result is what they decide${hostIsWaited(ctx) ? ', and you abstain' : ''}. Members who have not chosen (${waiting.map((w) => escapeHtml(w)).join(', ')}) are taken out of this count for that moment and counted again right after. Everyone sees each step in the room's events, and the receipt signs the honest result: no winner when nobody chose.</p>
<button type="button" id="end-decision">End this decision now</button></details>`;
  const status = document.getElementById('host-decision-status');
  for (const button of root.querySelectorAll<HTMLButtonElement>('#end-voting, #end-decision')) {
    button.addEventListener('click', () => {
      button.disabled = true;
      if (status) {
        status.textContent = 'Ending voting…';
        status.classList.remove('error');
      }
      endNow(ctx)
        .then((done) => {
          if (status) status.textContent = done;
        })
        .catch((error: unknown) => {
          button.disabled = false;
          if (status) {
            status.textContent = plainMessage(error);
            status.classList.add('error');
          }
        });
    });
  }
}
