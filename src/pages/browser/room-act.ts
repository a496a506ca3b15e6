/**
 * What a seated person can do on the room page, as forms sent to the API with the seat's token:
 * choose (the mechanism's ballot), abstain with a reason, propose an option, discuss with a stance,
 * and — for the creator's seat — open a decision, start choosing a slate, invite (a link whose secret
 * rides in the URL fragment, never sent to a server in a URL) and close the room. The server enforces
 * every authority; the page only hides what the views say this seat cannot do.
 */
import { ballotWords, escapeHtml, when } from '../room-render.js';
import { api, type Json } from './api.js';
import { wireCopyButtons } from './copy.js';
import { fieldOf, plainMessage, showFieldError, wireFieldErrors } from './form-errors.js';
import { renderHostDecision } from './host-decision.js';
import { ballotFields, ballotKind, prefillBallot, readBallot, wireBallot } from './ballot.js';
import { readCasts, rememberCast, type Seat } from './seat-store.js';

const SLATE_SECONDS = 86_400;

export interface RoomContext {
  slug: string;
  seat: Seat;
  view: Json;
  full: Json;
  /** Re-read the room now (after an action), without waiting for the event. */
  refresh: () => void;
}

/** A refusal in words for people: beside the field it is about (focused), else in the form's status line. */
function say(form: HTMLFormElement, status: Element | null, error: unknown): void {
  const field = fieldOf(form, error);
  if (field) {
    showFieldError(field, plainMessage(error));
    return;
  }
  if (!status) return;
  status.textContent = plainMessage(error);
  status.classList.add('error');
}

/**
 * Runs an action from a form: the button is disabled meanwhile; a refusal is shown for people. The
 * browser's validation stays on (it runs before the submit event); its verdicts are worded the same way.
 */
function onSubmit(form: HTMLFormElement | null, run: (form: HTMLFormElement) => Promise<string | undefined>): void {
  if (form) wireFieldErrors(form);
  form?.addEventListener('submit', (event) => {
    event.preventDefault();
    // The form's own status line, not one inside it (the quadratic credits counter is a status too).
    const status = form.querySelector(':scope > [role="status"]');
    const buttons = [...form.querySelectorAll<HTMLButtonElement>('button[type="submit"]')];
    for (const b of buttons) b.disabled = true;
    if (status) {
      status.textContent = '';
      status.classList.remove('error');
    }
    run(form)
      .then((done) => {
        if (status && done) status.textContent = done;
      })
      .catch((error: unknown) => say(form, status, error))
      .finally(() => {
        for (const b of buttons) b.disabled = false;
        form.dispatchEvent(new Event('input'));
      });
  });
}

const value = (form: HTMLFormElement, name: string) =>
  ((form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? '').trim();

/** A key for what the action forms depend on: they are rebuilt only when it changes, so typing survives updates. */
export function actKey(ctx: RoomContext): string {
  const d = ctx.view.decision;
  return JSON.stringify([
    ctx.view.status,
    d?.seq,
    d?.status,
    d?.options,
    d?.can_propose_more,
    d?.can_start_choosing,
    ctx.view.role,
    myVote(ctx)?.cast_at ?? null,
    // Where the room hides choices, the ballot this browser cast is what "you chose" shows.
    d ? (readCasts(ctx.slug)[String(d.seq)] ?? null) : null,
  ]);
}

function myVote(ctx: RoomContext): Json | undefined {
  return (ctx.full.votes ?? []).find((v: Json) => v.participant_id === ctx.seat.participantId);
}

function eligible(ctx: RoomContext): boolean {
  const d = ctx.view.decision;
  if (!d || ctx.view.role !== 'participant') return false;
  const ids: string[] | null = d.eligible_participant_ids ?? null;
  return ids === null || ids.includes(ctx.seat.participantId);
}

export function renderAct(root: HTMLElement, ctx: RoomContext): void {
  const { view, slug, seat } = ctx;
  const d = view.decision;
  const parts: string[] = [];
  const choosing = d && (d.status === 'voting' || d.status === 'settling' || d.status === 'open');
  if (view.status !== 'concluded' && d && choosing && eligible(ctx) && (d.options ?? []).length > 0) {
    const kind = ballotKind(String(ctx.full.config?.mechanism ?? ''), d.agreement === true);
    const mine = myVote(ctx);
    const remembered = readCasts(slug)[String(d.seq)];
    const mechanism = String(ctx.full.config?.mechanism ?? '');
    const current = mine ? ballotWords(mine.choice, mechanism) : remembered ? ballotWords(remembered, mechanism) : null;
    parts.push(`<form id="choose-form" class="stack panel" aria-labelledby="choose-h"><h2 id="choose-h">Your choice</h2>
${d.agreement ? '<p><strong>This is an agreement:</strong> it passes only if everyone eligible accepts the same option.</p>' : ''}
<p id="my-choice">${current ? `You chose: <strong>${escapeHtml(current)}</strong>. You can revise it while choosing is open.` : 'You have not chosen yet.'}</p>
${ballotFields(kind, d.options)}
<label for="choose-reason">Why (optional, shown with your choice where the room shows choices)</label>
<textarea id="choose-reason" name="reason" rows="2" maxlength="2000"></textarea>
<button type="submit">${current ? 'Revise my choice' : 'Choose'}</button>
<p role="status" aria-live="polite"></p></form>`);
    if (!d.agreement) {
      parts.push(`<form id="abstain-form" class="stack panel" aria-labelledby="abstain-h"><h3 id="abstain-h">Abstain</h3>
<label for="abstain-reason">Reason</label><input id="abstain-reason" name="reason" required maxlength="500">
<button type="submit">Abstain</button><p role="status" aria-live="polite"></p></form>`);
    }
  }
  if (view.status !== 'concluded' && d?.can_propose_more) {
    parts.push(`<form id="propose-form" class="stack panel" aria-labelledby="propose-h"><h3 id="propose-h">Propose an option</h3>
<label for="propose-option">Option</label><input id="propose-option" name="option" required maxlength="500">
<button type="submit">Propose</button><p role="status" aria-live="polite"></p></form>`);
  }
  // The host always sees how a slate ends, even before it has options (docs/how-decisions-end.md).
  if (view.status !== 'concluded' && (d?.can_start_choosing || (seat.host && d?.status === 'proposing'))) {
    const count = (d.options ?? []).length;
    const opens = d.voting_opens_at
      ? ` If nobody starts it, choosing opens by itself ${when(d.voting_opens_at)} once the slate has an option.`
      : '';
    parts.push(`<form id="start-form" class="stack panel" aria-labelledby="start-h"><h3 id="start-h">Collecting proposals</h3><p>${
      count > 0
        ? `The slate has ${escapeHtml(count)} option${count === 1 ? '' : 's'}. Starting freezes it and opens choosing.`
        : 'The slate is empty: choosing can start once someone proposes an option.'
    }${opens}</p>
<button type="submit"${d.can_start_choosing ? '' : ' disabled'}>Start choosing with this slate</button><p role="status" aria-live="polite"></p></form>`);
  }
  root.innerHTML = parts.join('');
  const chooseForm = root.querySelector<HTMLFormElement>('#choose-form');
  if (chooseForm && d) {
    const kind = ballotKind(String(ctx.full.config?.mechanism ?? ''), d.agreement === true);
    wireBallot(chooseForm, kind);
    const cast = myVote(ctx)?.choice ?? readCasts(slug)[String(d.seq)];
    if (cast !== undefined) prefillBallot(chooseForm, kind, d.options, cast);
    onSubmit(chooseForm, async (form) => {
      const choice = readBallot(form, kind, d.options);
      const reason = value(form, 'reason');
      const done = await api(
        'POST',
        `/api/rooms/${slug}/choose`,
        { choice, decision: d.seq, ...(reason ? { reason } : {}) },
        seat.token,
      );
      rememberCast(slug, d.seq, typeof choice === 'string' ? choice : JSON.stringify(choice));
      ctx.refresh();
      return done.status === 'resolved'
        ? `Chosen: the decision is resolved (${done.resolved_winner ?? 'no winner'}).`
        : 'Chosen.';
    });
  }
  onSubmit(root.querySelector<HTMLFormElement>('#abstain-form'), async (form) => {
    await api('POST', `/api/rooms/${slug}/abstain`, { reason: value(form, 'reason'), decision: d.seq }, seat.token);
    ctx.refresh();
    return 'You abstained.';
  });
  onSubmit(root.querySelector<HTMLFormElement>('#propose-form'), async (form) => {
    const done = await api(
      'POST',
      `/api/rooms/${slug}/options`,
      { option: value(form, 'option'), decision: d.seq },
      seat.token,
    );
    ctx.refresh();
    return done.accepted === false ? (done.reason ?? 'Not added.') : 'Proposed.';
  });
  onSubmit(root.querySelector<HTMLFormElement>('#start-form'), async () => {
    await api('POST', `/api/rooms/${slug}/start-choosing`, { decision: d.seq }, seat.token);
    ctx.refresh();
    return 'Choosing is open.';
  });
}

export function renderSay(root: HTMLElement, ctx: RoomContext): void {
  if (ctx.view.status === 'concluded' || ctx.view.role !== 'participant') {
    root.innerHTML = '';
    return;
  }
  if (root.querySelector('#say-form')) return;
  root.innerHTML = `<form id="say-form" class="stack panel" aria-labelledby="say-h"><h3 id="say-h">Say something</h3>
<label for="say-body">Message</label><textarea id="say-body" name="body" rows="3" required maxlength="100000"></textarea>
<label for="say-stance">Stance</label><select id="say-stance" name="stance"><option value="">None</option><option value="agree">Agree</option><option value="disagree">Disagree</option><option value="clarify">Clarify</option><option value="extend">Extend</option></select>
<button type="submit">Send</button><p role="status" aria-live="polite"></p></form>`;
  onSubmit(root.querySelector<HTMLFormElement>('#say-form'), async (form) => {
    const stance = value(form, 'stance');
    await api(
      'POST',
      `/api/rooms/${ctx.slug}/discuss`,
      { body: value(form, 'body'), ...(stance ? { stance } : {}) },
      ctx.seat.token,
    );
    (form.elements.namedItem('body') as HTMLTextAreaElement).value = '';
    ctx.refresh();
    return 'Sent.';
  });
}

/** The creator's controls: built once (an invite link stays on screen across updates), removed when the room closes. */
export function renderHost(root: HTMLElement, ctx: RoomContext): void {
  if (!ctx.seat.host || ctx.view.status === 'concluded') {
    root.innerHTML = '';
    return;
  }
  const built = root.querySelector('#host-controls');
  if (!built) buildHost(root, ctx);
  const decision = root.querySelector<HTMLElement>('#host-decision');
  if (decision) renderHostDecision(decision, ctx);
}

function buildHost(root: HTMLElement, ctx: RoomContext): void {
  root.innerHTML = `<div id="host-controls"><h2>Host controls</h2>
<div id="host-decision"></div><p id="host-decision-status" role="status" aria-live="polite"></p>
<form id="ask-form" class="stack panel" aria-labelledby="ask-h"><h3 id="ask-h">Open a new decision</h3>
<label for="ask-question">Question</label><input id="ask-question" name="question" required minlength="3" maxlength="500">
<label for="ask-options">Options, one per line (leave empty to collect proposals for up to a day, then start choosing)</label><textarea id="ask-options" name="options" rows="3"></textarea>
<label for="ask-context">Context (optional)</label><textarea id="ask-context" name="context" rows="2"></textarea>
<label class="inline"><input type="checkbox" name="agreement" id="ask-agreement"> Agreement: pass only if everyone accepts the same option</label>
<button type="submit">Open the decision</button><p role="status" aria-live="polite"></p></form>
<form id="invite-form" class="stack panel" aria-labelledby="invite-h"><h3 id="invite-h">Invite someone</h3>
<label for="invite-label">Who (a name for the seat)</label><input id="invite-label" name="label" required maxlength="100">
<button type="submit">Create an invite link</button><p role="status" aria-live="polite"></p>
<div id="invite-result" hidden><label for="invite-link">Invite link (share it privately; whoever has it can take the seat)</label>
<input id="invite-link" class="invite-link" readonly><button type="button" id="invite-copy" data-copy="invite-link">Copy the link</button> <span class="muted" role="status" aria-live="polite"></span></div></form>
<form id="close-form" class="stack panel" aria-labelledby="close-h"><h3 id="close-h">Close the room</h3>
<p class="muted">A room closes once no decision is open; closing signs a final receipt and makes the room read-only.</p>
<label for="close-statement">Closing statement</label><textarea id="close-statement" name="statement" rows="2" maxlength="10000"></textarea>
<button type="submit">Close the room</button><p role="status" aria-live="polite"></p></form></div>`;
  const { slug, seat } = ctx;
  onSubmit(root.querySelector<HTMLFormElement>('#ask-form'), async (form) => {
    const options = value(form, 'options')
      .split('\n')
      .map((o) => o.trim())
      .filter(Boolean);
    const context = value(form, 'context');
    const agreement = (form.elements.namedItem('agreement') as HTMLInputElement).checked;
    await api(
      'POST',
      `/api/rooms/${slug}/ask`,
      {
        question: value(form, 'question'),
        options,
        // No options: a slate that collects proposals until someone starts choosing (a day at most).
        ...(options.length === 0 ? { proposal_window: SLATE_SECONDS } : {}),
        ...(context ? { context } : {}),
        ...(agreement ? { agreement } : {}),
      },
      seat.token,
    );
    form.reset();
    ctx.refresh();
    return 'The decision is open.';
  });
  onSubmit(root.querySelector<HTMLFormElement>('#invite-form'), async (form) => {
    const made = await api('POST', `/api/rooms/${slug}/invites`, { label: value(form, 'label') }, seat.token);
    // The secret rides in the fragment: browsers never send it to a server, in a URL or a Referer.
    // The seat's name rides along, so the join form offers it.
    const fragment = new URLSearchParams({ invite: made.invite_token, name: value(form, 'label') });
    const link = `${location.origin}/r/${encodeURIComponent(slug)}#${fragment.toString()}`;
    const result = form.querySelector<HTMLElement>('#invite-result');
    const input = form.querySelector<HTMLInputElement>('#invite-link');
    if (result && input) {
      input.value = link;
      result.hidden = false;
    }
    return `Invite created for ${value(form, 'label')}.`;
  });
  wireCopyButtons(root);
  onSubmit(root.querySelector<HTMLFormElement>('#close-form'), async (form) => {
    const statement = value(form, 'statement');
    await api('POST', `/api/rooms/${slug}/close`, statement ? { statement } : {}, seat.token);
    ctx.refresh();
    return 'The room is closed.';
  });
}
