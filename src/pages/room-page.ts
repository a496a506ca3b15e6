/**
 * The room page's script (bundled for the browser): a place to take part. It joins (a name; or an
 * invite read from the URL fragment, or the password, for private rooms), keeps the seat's token in
 * this browser for this room only (browser/seat-store.ts), shows the seat's recovery link (the token
 * in a URL fragment, which browsers never send) and asks before "leave this device" forgets it, renders
 * the room with the same functions the server used for the first paint, offers the actions the seat
 * may take (browser/room-act.ts), verifies every receipt in the reader's own browser — signature
 * against the service's JWKS, hash, link to the receipt before, replay, and its inclusion in the
 * transparency log (browser/log-inclusion.ts) — and follows the room live
 * over the event stream. The token is sent only in an Authorization header.
 */
import {
  type ChainReport,
  ConclaveClient,
  type Jwks,
  type ReceiptReport,
  verifyRoomReceiptChain,
} from '../client/index.js';
import { api, ApiError, type Json } from './browser/api.js';
import { wireCopyButtons } from './browser/copy.js';
import { fieldOf, plainMessage, showFieldError, wireFieldErrors } from './browser/form-errors.js';
import { type LogWatch, logWatch, showLogInclusion } from './browser/log-inclusion.js';
import { actKey, type RoomContext, renderAct, renderHost, renderSay } from './browser/room-act.js';
import { renderSeats } from './browser/seats.js';
import { forgetSeat, loadSeat, recoveryLink, type Seat, saveSeat, takeRecoveredSeat } from './browser/seat-store.js';
import { coalesce } from './coalesce.js';
import { escapeHtml, roomSections } from './room-render.js';

const embedded = JSON.parse(document.getElementById('room-state')?.textContent ?? '{}') as {
  slug?: string;
  /** The room's URL, the one its receipts are signed for (`<service>/r/<slug>`). */
  url?: string;
  visibility?: string;
};
const client = new ConclaveClient({ baseUrl: location.origin });
const byId = (id: string) => document.getElementById(id);

function liveStatus(text: string): void {
  const status = byId('live-status');
  if (status) status.textContent = text;
}

/**
 * Verifies every receipt in this browser, bound to this page's room, and shows beside each one's
 * marks what it signs (docs/receipts.md, Verifying): the winner and count, or the closing statement.
 * The sections above are rendered from the outcome body's unsigned fields; a field there that
 * disagrees with its receipt fails the receipt, and the signed value is shown next to it.
 */
async function verifyReceipts(outcome: unknown, jwks: Jwks, room: string): Promise<void> {
  const report = await verifyRoomReceiptChain(outcome, { jwks, room });
  for (const receipt of report.receipts) {
    if (!receipt.receipt_hash) continue;
    const hash = CSS.escape(receipt.receipt_hash);
    const slot = document.querySelector<HTMLElement>(`[data-receipt-hash="${hash}"]`);
    if (!slot) continue;
    const mark = (ok: boolean | null, what: string) => (ok === null ? '' : `${ok ? '✓' : '✗'} ${what}`);
    const checks = [
      mark(receipt.signature, 'signature'),
      mark(receipt.hash, 'hash'),
      mark(receipt.link, 'link'),
      mark(receipt.replay, 'replay'),
    ].filter(Boolean);
    slot.dataset.receiptVerified = String(receipt.ok);
    slot.textContent = receipt.ok ? checks.join(' ') : `${checks.join(' ')} — ${receipt.errors.join('; ')}`;
    const signed = document.querySelector<HTMLElement>(`[data-receipt-signed="${hash}"]`);
    if (signed) showSigned(signed, receipt, report);
  }
  // A receipt the walk could not reach (a body without decisions) stays unverified, and says so.
  for (const slot of document.querySelectorAll<HTMLElement>('[data-receipt-verified="pending"]')) {
    slot.dataset.receiptVerified = 'false';
    slot.textContent = `✗ not verified: ${report.errors[0] ?? 'the receipt is missing from the outcome'}`;
  }
}

/** The room and values a receipt signs, and whether what the page shows beside it agrees. */
function showSigned(element: HTMLElement, receipt: ReceiptReport, report: ChainReport): void {
  const decision = report.decisions.find((d) => d.label === receipt.label);
  const statement = report.conclusion?.statement;
  const values = decision
    ? `winner ${decision.winner === null ? 'none' : `“${decision.winner}”`} (${decision.status ?? 'no status'}), ${Object.entries(
        decision.tallies,
      )
        .map(([option, count]) => `${option} ${count}`)
        .join(', ')}`
    : receipt.label === 'conclusion'
      ? `closing statement ${statement == null ? 'none' : `“${statement}”`}`
      : '';
  const room = receipt.room_match === null ? '' : `${receipt.room_match ? '✓' : '✗'} room `;
  const fields = receipt.fields_match
    ? '✓ fields'
    : '✗ fields: what this page shows above differs from what the receipt signs';
  element.dataset.fieldsMatch = String(receipt.fields_match);
  element.dataset.roomMatch = String(receipt.room_match);
  element.textContent = `${room}${fields} — signed: ${values}`;
  element.hidden = false;
}

/**
 * A receipt the log has not sequenced yet (it normally is within a second of sealing) is looked for
 * again: the page re-reads the room a little later, backing off, until every receipt is in the log.
 */
let logRetry: ReturnType<typeof setTimeout> | undefined;
let logRetries = 0;
function retryUnsequenced(unsequenced: number, refresh: () => void): void {
  if (unsequenced === 0) {
    logRetries = 0;
    return;
  }
  if (logRetry !== undefined || logRetries >= 30) return;
  logRetry = setTimeout(
    () => {
      logRetry = undefined;
      logRetries++;
      refresh();
    },
    Math.min(5000, 500 * 2 ** Math.min(logRetries, 4)),
  );
}

/**
 * Times read in the reader's own time zone; the UTC time the server wrote stays on hover (title) and
 * in the element's datetime attribute.
 */
function localTimes(root: HTMLElement): void {
  for (const time of root.querySelectorAll<HTMLTimeElement>('time[datetime]:not([data-local])')) {
    const at = new Date(time.dateTime);
    if (Number.isNaN(at.getTime())) continue;
    time.title = time.textContent ?? time.dateTime;
    time.textContent = at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
    time.dataset.local = 'true';
  }
}

/** The settling countdown ticks down between reads. */
let countdown: ReturnType<typeof setInterval> | undefined;
function startCountdown(): void {
  clearInterval(countdown);
  const slot = document.querySelector<HTMLElement>('.countdown[data-seconds]');
  if (!slot) return;
  let left = Number(slot.dataset.seconds);
  countdown = setInterval(() => {
    left = Math.max(0, left - 1);
    slot.textContent = `${left} s`;
    if (left === 0) clearInterval(countdown);
  }, 1000);
}

let lastActKey = '';
let lastFull: Json | null = null;
/** Sealed decisions at the last full read: a seal re-reads it once, for the ballots' reasons. */
let lastSealed = 0;
let lastRoster = '';

/** Re-renders every section from a fresh read; answers the event seq it reflects. */
async function update(
  slug: string,
  jwks: Jwks,
  log: LogWatch,
  seat: Seat | null,
  refresh: () => void,
): Promise<number> {
  const token = seat?.token;
  const [view, outcome] = await Promise.all([
    api('GET', `/api/rooms/${slug}`, undefined, token),
    api('GET', `/api/rooms/${slug}/outcome`, undefined, token),
  ]);
  // The full view (the room's config, the open decision's votes with their reasons) is read with
  // every change only while a decision is open, and once more when one seals; between decisions the
  // last one serves.
  const sealed = (Array.isArray(outcome.decisions) ? outcome.decisions : []).filter(
    (d: Json) => typeof d.receipt_hash === 'string',
  ).length;
  // Seats come and go, and change role, between decisions too: the seats list follows them.
  const roster = JSON.stringify(view.roster ?? null);
  if (seat && (view.decision || !lastFull || sealed !== lastSealed || roster !== lastRoster))
    lastFull = await api('GET', `/api/rooms/${slug}?include=full`, undefined, token);
  lastSealed = sealed;
  lastRoster = roster;
  const full = seat ? lastFull : null;
  const sections = roomSections(view, outcome, full);
  for (const [name, html] of Object.entries(sections)) {
    const element = byId(`section-${name}`);
    if (element) element.innerHTML = html;
  }
  startCountdown();
  localTimes(document.body);
  if (seat && full) {
    const ctx: RoomContext = { slug, seat, view, full, refresh };
    const key = actKey(ctx);
    if (key !== lastActKey) {
      lastActKey = key;
      const act = byId('section-act');
      if (act) {
        renderAct(act, ctx);
        localTimes(act);
      }
    }
    const say = byId('section-say');
    if (say) renderSay(say, ctx);
    const host = byId('section-host');
    if (host) renderHost(host, ctx);
    const seats = byId('section-seats');
    if (seats) renderSeats(seats, ctx);
  }
  await verifyReceipts(outcome, jwks, embedded.url ?? `${location.origin}/r/${slug}`);
  retryUnsequenced((await showLogInclusion(outcome, log)).unsequenced, refresh);
  return Number(view.current_through ?? 0);
}

const noticeKey = (slug: string) => `conclave.notice.${slug}`;

/**
 * What joining did, said once after the page reloads: an invite that had been used already does not
 * make a second seat — the service hands its seat over (seat recovery), so the person sees whose seat
 * they now hold and that the other browser no longer holds it.
 */
function takeNotice(slug: string, seat: Seat): string {
  const notice = sessionStorage.getItem(noticeKey(slug));
  sessionStorage.removeItem(noticeKey(slug));
  return notice === 'recovered'
    ? `<p class="warning" id="seat-notice" role="status">This invite had been used already, so it did not make a new seat: you took back the seat of <strong>${escapeHtml(seat.name)}</strong>. Its earlier choice still stands (you can revise it), and the browser that held the seat before no longer does.</p>`
    : '';
}

/** The recovery link, with its warning and a copy button: shown in the seat panel and again before leaving. */
function keepSeatHtml(slug: string, seat: Seat, id: string): string {
  return `<p class="warning"><strong>Keep your seat.</strong> This link restores ${seat.host ? 'your seat and the host controls' : 'your seat'} on another device or after this browser forgets it. Anyone who has it can act as you: keep it private, like a password.</p>
<label for="${id}">Your recovery link</label>
<input id="${id}" class="invite-link" readonly value="${escapeHtml(recoveryLink(slug, seat))}">
<button type="button" data-copy="${id}">Copy the recovery link</button> <span class="muted" role="status" aria-live="polite"></span>`;
}

function showSeat(slug: string, seat: Seat): void {
  const join = byId('join-panel');
  if (join) join.hidden = true;
  const required = byId('join-required');
  if (required) required.hidden = true;
  const panel = byId('seat-panel');
  if (!panel) return;
  panel.hidden = false;
  panel.innerHTML = `<p class="seat-line"><span>You are in this room as <strong id="seat-name">${escapeHtml(seat.name)}</strong>${seat.host ? ' (host)' : ''}. Your seat is kept in this browser.</span>
<button type="button" id="leave-device">Leave this device</button></p>
${takeNotice(slug, seat)}<details id="keep-seat"><summary>Keep your seat on another device</summary>${keepSeatHtml(slug, seat, 'recovery-link')}</details>
<dialog id="leave-dialog" aria-labelledby="leave-h"><h2 id="leave-h">Leave this device?</h2>
<p>This browser forgets your seat${seat.host ? ' — and with it the host controls' : ''}. Only your recovery link brings it back: copy it first.</p>
${keepSeatHtml(slug, seat, 'leave-recovery-link')}
<p class="seat-line"><button type="button" id="leave-confirm">Leave this device</button> <button type="button" id="leave-cancel">Stay</button></p></dialog>`;
  wireCopyButtons(panel);
  const dialog = byId('leave-dialog') as HTMLDialogElement | null;
  byId('leave-device')?.addEventListener('click', () => dialog?.showModal());
  byId('leave-cancel')?.addEventListener('click', () => dialog?.close());
  byId('leave-confirm')?.addEventListener('click', () => {
    forgetSeat(slug);
    location.reload();
  });
}

/**
 * A recovery link's seat, checked against the service before this browser keeps it: a link whose
 * token no longer works (the room was deleted, or the seat recovered elsewhere through its invite)
 * says so instead.
 */
async function restoreSeat(slug: string, seat: Seat): Promise<boolean> {
  try {
    await api('GET', `/api/rooms/${slug}`, undefined, seat.token);
  } catch (error) {
    liveStatus(
      error instanceof ApiError && (error.status === 401 || error.status === 403)
        ? 'This recovery link no longer holds a seat in this room: join again, or ask the host for an invite.'
        : 'The seat could not be restored: the service could not be reached. Open the link again.',
    );
    return false;
  }
  saveSeat(slug, seat);
  return true;
}

/**
 * An invite link carries its secret after `#invite=` (and the name the host gave the seat after
 * `name=`); it is read once and removed from the address bar.
 */
function takeInvite(): { invite: string; name: string } | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const invite = fragment.get('invite');
  if (!invite) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return { invite, name: fragment.get('name') ?? '' };
}

/** The join form comes inert in a <template>; mounted only here, so without scripts nothing can be sent. */
function mountJoinForm(): void {
  const template = byId('join-template') as HTMLTemplateElement | null;
  if (template && !byId('join-form')) template.after(template.content.cloneNode(true));
}

function waitForJoin(slug: string, invited: { invite: string; name: string } | null): Promise<Seat> {
  const invite = invited?.invite ?? null;
  mountJoinForm();
  const form = byId('join-form') as HTMLFormElement | null;
  const status = byId('join-status');
  const note = byId('invite-note');
  if (invite && note) note.textContent = 'You have an invite to this room: choose the name to show, and join.';
  const passwordField = byId('password-field');
  if (invite && passwordField) passwordField.hidden = true;
  const nameInput = byId('join-name') as HTMLInputElement | null;
  const button = byId('join-button');
  const named = () => {
    if (button && nameInput) button.textContent = nameInput.value.trim() ? `Join as ${nameInput.value.trim()}` : 'Join';
  };
  nameInput?.addEventListener('input', named);
  if (nameInput && invited?.name) {
    nameInput.value = invited.name;
    named();
  }
  if (form) wireFieldErrors(form);
  return new Promise((resolve) => {
    form?.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = (byId('join-name') as HTMLInputElement | null)?.value.trim() ?? '';
      const password = (byId('join-password') as HTMLInputElement | null)?.value ?? '';
      if (!name) {
        if (nameInput) showFieldError(nameInput, 'Enter the name to show in the room.');
        return;
      }
      const body: Record<string, unknown> = { display_name: name };
      if (invite) body.invite = invite;
      else if (password) body.password = password;
      if (status) status.textContent = 'Joining…';
      api('POST', `/api/rooms/${slug}/join`, body)
        .then((joined) => {
          const seat: Seat = {
            token: String(joined.participant_token),
            participantId: String(joined.participant_id),
            name: String(joined.display_name ?? name),
            host: false,
          };
          saveSeat(slug, seat);
          if (joined.recovered === true) sessionStorage.setItem(noticeKey(slug), 'recovered');
          resolve(seat);
        })
        .catch((error: unknown) => {
          const field = form ? fieldOf(form, error) : null;
          if (field) showFieldError(field, plainMessage(error));
          else if (status) {
            status.textContent = `Not joined: ${plainMessage(error)}`;
            status.classList.add('error');
          }
        });
    });
  });
}

async function follow(slug: string, seat: Seat | null): Promise<void> {
  const [jwks, discovery] = await Promise.all([client.jwks() as Promise<Jwks>, api('GET', '/.well-known/svc.json')]);
  const log = logWatch(discovery.audit_log);
  let refresh: () => void = () => undefined;
  refresh = coalesce(async () => {
    await update(slug, jwks, log, seat, refresh);
  });
  const through = await update(slug, jwks, log, seat, refresh);
  liveStatus('Live: this page follows the room.');
  const auth = seat ? { token: seat.token } : undefined;
  for await (const _event of client.streamEvents({ slug, since_seq: through, ...(auth ? { auth } : {}) })) refresh();
}

async function main(): Promise<void> {
  const slug = embedded.slug;
  if (!slug) return;
  const invite = takeInvite();
  const recovered = takeRecoveredSeat();
  if (recovered) await restoreSeat(slug, recovered);
  const seat = loadSeat(slug);
  if (seat) {
    showSeat(slug, seat);
    try {
      await follow(slug, seat);
      return;
    } catch (error) {
      if (!(error instanceof ApiError && (error.status === 401 || error.status === 403))) throw error;
      // The seat is gone (removed, or the room was recreated): forget it and offer to join again.
      forgetSeat(slug);
      location.reload();
      return;
    }
  }
  if (embedded.visibility === 'public') void follow(slug, null).catch(() => undefined);
  await waitForJoin(slug, invite);
  location.reload();
}

main().catch((error: unknown) => {
  liveStatus(`Live updates stopped: ${(error as Error).message}`);
});
