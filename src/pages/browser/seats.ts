/**
 * Every seat in the room, for every member to see: its name, whether it is counted (a voter, or an
 * observer the host took out of the count) and whether it has answered the open decision. The host
 * also sees how each seat came in (the creator, an invite and its label, the room password, the
 * room's link, an agent's mandate) and can take a duplicate seat out of the electorate before the
 * decision seals, or count it again, with the member role endpoint (docs/concepts.md, Seats, members
 * and roles). Each change is a room event, so every member's page shows it at once.
 */
import { escapeHtml } from '../room-render.js';
import { api, type Json } from './api.js';
import { plainMessage } from './form-errors.js';
import type { RoomContext } from './room-act.js';

/** How a seat came in, from what the host can read (invites are listed only for the invite authority). */
function howJoined(p: Json, ctx: RoomContext, creatorId: string | null): string {
  if (p.id === creatorId) return 'created the room';
  if (p.agent_did) return 'an agent’s mandate';
  const invite = (ctx.full.invites ?? []).find((i: Json) => i.accepted_participant_id === p.id);
  if (invite) return `invite “${escapeHtml(invite.label)}”`;
  if (ctx.full.config?.visibility === 'private') return 'the room password';
  return 'the room’s link';
}

function answered(p: Json, ctx: RoomContext, creatorId: string | null): string {
  const d = ctx.view.decision;
  if (p.role === 'observer') return 'not counted';
  if (p.id === creatorId && ctx.full.config?.creator_votes === false) return 'does not vote';
  if (!d) return '—';
  if ((ctx.full.abstentions ?? []).some((a: Json) => a.participant_id === p.id)) return 'abstained';
  return (ctx.view.roster?.waiting_for ?? []).includes(String(p.display_name)) ? 'not yet' : 'chosen';
}

function seatsKey(ctx: RoomContext): string {
  return JSON.stringify([
    ctx.full.participants?.map((p: Json) => [p.id, p.role, p.display_name]),
    ctx.view.roster?.waiting_for,
    ctx.view.decision?.seq,
    ctx.view.status,
    ctx.full.abstentions?.length,
  ]);
}

export function renderSeats(root: HTMLElement, ctx: RoomContext): void {
  const key = seatsKey(ctx);
  if (root.dataset.key === key) return;
  root.dataset.key = key;
  const host = ctx.seat.host && ctx.view.status !== 'concluded';
  const participants: Json[] = ctx.full.participants ?? [];
  // The creator is the first seat (seats are listed in join order, and the creator joins at creation).
  const creatorId = participants[0]?.id ?? null;
  const rows = participants
    .map((p) => {
      const counted = p.role === 'participant';
      const action =
        host && p.id !== creatorId
          ? `<td><button type="button" data-seat="${escapeHtml(p.id)}" data-role="${counted ? 'observer' : 'participant'}">${counted ? 'Take out of the vote' : 'Count again'}<span class="visually-hidden">: ${escapeHtml(p.display_name)}</span></button></td>`
          : host
            ? '<td></td>'
            : '';
      return `<tr data-seat-row="${escapeHtml(p.display_name)}"><th scope="row">${escapeHtml(p.display_name)}${p.id === ctx.seat.participantId ? ' (you)' : ''}</th>${host ? `<td data-label="Joined through">${howJoined(p, ctx, creatorId)}</td>` : ''}<td data-label="Role">${counted ? 'voter' : 'observer'}</td><td data-label="Open decision">${answered(p, ctx, creatorId)}</td>${action}</tr>`;
    })
    .join('');
  root.innerHTML = `<h2 id="seats-h">Seats</h2>
${host ? '<p class="muted">One person, one ballot: a seat taken out of the vote is no longer counted — its ballot on the open decision is left out when the decision seals. Everyone in the room sees the change.</p>' : ''}
<div class="table-scroll"><table id="seats" aria-labelledby="seats-h"><thead><tr><th scope="col">Name</th>${host ? '<th scope="col">Joined through</th>' : ''}<th scope="col">Role</th><th scope="col">Open decision</th>${host ? '<th scope="col">Action</th>' : ''}</tr></thead><tbody>${rows}</tbody></table></div>
<p id="seats-status" role="status" aria-live="polite"></p>`;
  const status = root.querySelector('#seats-status');
  for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-seat]')) {
    button.addEventListener('click', () => {
      button.disabled = true;
      const role = String(button.dataset.role);
      api(
        'PATCH',
        `/api/rooms/${ctx.slug}/members/${encodeURIComponent(String(button.dataset.seat))}`,
        { role },
        ctx.seat.token,
      )
        .then((done) => {
          if (status) {
            status.classList.remove('error');
            status.textContent =
              role === 'observer'
                ? `${done.participant?.display_name ?? 'The seat'} is out of the vote: it is no longer counted.`
                : `${done.participant?.display_name ?? 'The seat'} is counted again.`;
          }
          ctx.refresh();
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
