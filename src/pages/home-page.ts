/**
 * The home page's script (bundled for the browser, served as /assets/home.js): creates a room from
 * the form with POST /api/rooms, keeps the creator's seat in this browser for that room only
 * (src/pages/seat-store.ts) and opens the room's page. The password travels in the JSON body only.
 *
 * With no options the room collects proposals first: it is created without a decision
 * (`defer_first_decision`) and the question is asked as a slate (`proposal_window`), which stays
 * collecting until the host starts choosing or the collecting time is up (docs/concepts.md,
 * Decisions and slates). Errors are shown in plain words next to the field they concern, with focus
 * moved there; the browser's own validation stays on, and the API's agent-oriented wording is
 * never shown.
 */
import { ApiError, api } from './browser/api.js';
import { saveSeat } from './browser/seat-store.js';

// The form arrives inert in a <template>: mounted only by this script, so without scripts no form
// can send the room password anywhere (a plain form would put it in a GET query).
const template = document.getElementById('create-template') as HTMLTemplateElement | null;
template?.after(template.content.cloneNode(true));
const form = document.getElementById('create-room') as HTMLFormElement | null;
const status = document.getElementById('create-status');

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
/** The fields that have a place for an error message beside them. */
const FIELDS = ['question', 'options', 'password', 'quorum', 'display_name'] as const;
type Field = (typeof FIELDS)[number];

function control(name: string): Control | null {
  return document.getElementById(name) as Control | null;
}

function field(name: string): string {
  return control(name)?.value ?? '';
}

function checked(name: string): string | undefined {
  return (form?.querySelector(`input[name="${name}"]:checked`) as HTMLInputElement | null)?.value;
}

function clearError(name: Field): void {
  const slot = document.getElementById(`${name}-error`);
  if (slot) {
    slot.hidden = true;
    slot.textContent = '';
  }
  control(name)?.removeAttribute('aria-invalid');
}

/** Shows `text` beside the field and, for the first error of a submission, moves focus there. */
function showError(name: Field, text: string, focus: boolean): void {
  const slot = document.getElementById(`${name}-error`);
  const input = control(name);
  if (slot) {
    slot.textContent = text;
    slot.hidden = false;
  }
  input?.setAttribute('aria-invalid', 'true');
  if (focus) input?.focus();
}

/** What the browser's own check found, in the page's words. */
function validityWords(name: Field, input: Control): string {
  const v = input.validity;
  switch (name) {
    case 'question':
      return v.valueMissing
        ? 'Write the question people will decide (3 to 500 characters).'
        : 'The question is too short: write at least 3 characters.';
    case 'password':
      return 'The password is too short: use at least 12 characters, or leave it empty and invite people by link.';
    case 'quorum':
      return 'The quorum is a whole number of responses, 1 or more — or leave it empty for no quorum.';
    case 'display_name':
      return 'Write the name the others will see for you (up to 100 characters).';
    default:
      return 'Check this field.';
  }
}

/** The page's own checks, beyond what the browser checks: the first problem, or null. */
function ownCheck(options: readonly string[]): [Field, string] | null {
  if (field('question').trim().length < 3) {
    return ['question', 'The question is too short: write at least 3 characters (spaces do not count).'];
  }
  const seen = new Set<string>();
  for (const option of options) {
    if (seen.has(option)) return ['options', `The option "${option}" is listed twice: each option must be different.`];
    seen.add(option);
  }
  if (options.length > 100) return ['options', 'A decision holds at most 100 options: shorten the list.'];
  if (field('display_name').trim().length === 0) return ['display_name', 'Write the name the others will see for you.'];
  return null;
}

/** A refusal from the API, turned into what a person can do about it (the field it concerns, if any). */
function plainRefusal(code: string, offending: string | undefined): [Field | null, string] {
  const name = (offending ?? '').replace(/^config\./, '').split('.')[0] ?? '';
  if (code === 'input.invalid') {
    if (name === 'question') return ['question', 'The question must be 3 to 500 characters long.'];
    if (name === 'options') return ['options', 'Each option needs some text, and no option may be listed twice.'];
    if (name === 'password') return ['password', 'The password must be at least 12 characters long.'];
    if (name === 'quorum') return ['quorum', 'The quorum must be a whole number of 1 or more, or empty.'];
    if (name === 'display_name') {
      return [
        'display_name',
        'This name cannot be used: names such as "admin" or "operator" belong to the service itself, and a name needs visible letters. Choose another.',
      ];
    }
    return [null, 'One of the settings was not accepted. Check the form and try again.'];
  }
  if (code === 'rate_limit.exceeded') {
    return [null, 'Too many rooms were created from here just now. Wait a minute, then try again.'];
  }
  return [null, 'The room could not be created just now. Try again in a moment.'];
}

function roomConfig(): Record<string, unknown> {
  const quorum = field('quorum').trim();
  return {
    type: checked('type') ?? 'ephemeral',
    mechanism: field('mechanism'),
    visibility: checked('visibility') ?? 'unlisted',
    choice_visibility: checked('choice_visibility') ?? 'live',
    creator_votes: (control('creator_votes') as HTMLInputElement | null)?.checked !== false,
    quorum: quorum === '' ? null : Number(quorum),
    voting_window: Number(field('voting_window')),
    early_close: (control('early_close') as HTMLInputElement | null)?.checked === true,
    settle_window: Number(field('settle_window')),
  };
}

async function create(): Promise<void> {
  if (!form || !status) return;
  for (const name of FIELDS) clearError(name);
  status.removeAttribute('role');
  const options = field('options')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const problem = ownCheck(options);
  if (problem) {
    showError(problem[0], problem[1], true);
    return;
  }
  const config = roomConfig();
  const password = field('password');
  const displayName = field('display_name').trim();
  const question = field('question').trim();
  const collect = options.length === 0;
  const body: Record<string, unknown> = {
    question,
    config,
    display_name: displayName,
    // No options: create the room first, then ask the question as a slate that collects proposals.
    ...(collect ? { defer_first_decision: true } : { options }),
  };
  if (password && config.visibility === 'private') body.password = password;
  status.textContent = 'Creating the room…';
  try {
    const room = await api('POST', '/api/rooms', body);
    saveSeat(room.slug, {
      token: room.creator_token,
      participantId: room.participant_id,
      name: displayName,
      host: true,
    });
    if (collect) {
      const ask = { question, proposal_window: Number(field('proposal_window')) };
      // Should the question be refused now, the room still exists: its page lets the host ask again.
      await api('POST', `/api/rooms/${encodeURIComponent(room.slug)}/ask`, ask, room.creator_token).catch(
        () => undefined,
      );
    }
    location.assign(`/r/${encodeURIComponent(room.slug)}`);
  } catch (error) {
    const [name, words] =
      error instanceof ApiError
        ? plainRefusal(error.code, error.field)
        : [null, 'The service could not be reached. Check the connection and try again.'];
    if (name) showError(name, words, true);
    status.textContent = name
      ? 'The room was not created: see the message above.'
      : `The room was not created. ${words}`;
    status.setAttribute('role', 'alert');
  }
}

// The browser checks the fields first (required, lengths, number ranges); each field it refuses gets
// a plain message beside it, and focus goes to the first one.
let firstInvalid = true;
form?.addEventListener(
  'invalid',
  (event) => {
    const input = event.target as Control;
    const name = FIELDS.find((f) => f === input.id);
    if (!name) return;
    showError(name, validityWords(name, input), firstInvalid);
    firstInvalid = false;
    queueMicrotask(() => {
      firstInvalid = true;
    });
  },
  true,
);
for (const name of FIELDS) control(name)?.addEventListener('input', () => clearError(name));

form?.addEventListener('submit', (event) => {
  event.preventDefault();
  void create();
});
