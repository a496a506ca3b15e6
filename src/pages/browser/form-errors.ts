/**
 * Errors for people on the room page's forms. The API's messages are written for agents (they name
 * routes and JSON bodies); a person reads a plain sentence beside the field it is about, with focus
 * moved there. The browser's own validation stays on: a field it refuses gets the same treatment
 * (the `invalid` event), worded from the field's constraints.
 */
import { ApiError } from './api.js';

/** What a refusal means to a person, by its code (and, for input errors, the field it names). */
const BY_CODE: Record<string, string> = {
  'room.invite_required':
    'This room takes people by personal invite only: open the invite link the host sent you, or ask them for one.',
  'auth.invalid_password': 'That password is not right. Check it with the host and try again.',
  'authority.denied': 'Your seat is not allowed to do that here: ask the host.',
  'decision.not_open': 'Nothing is open for that right now: the page has been brought up to date.',
  'choice.not_eligible': 'Your seat does not vote on this decision.',
  'room.concluded': 'This room is closed: nothing more can be done in it.',
  'room.at_capacity': 'This room is full: ask the host to make room.',
  'rate_limit.exceeded': 'Too many tries at once: wait a few seconds and try again.',
  'participant.token_superseded': 'Your seat was taken back on another device: this browser no longer holds it.',
};

const BY_FIELD: Record<string, string> = {
  question: 'The question needs 3 to 500 characters.',
  options: 'Each option needs some text, and no two options may be the same.',
  display_name: 'Your name needs 1 to 100 characters.',
  choice: 'That choice cannot be counted: check the ballot and try again.',
  reason: 'The reason is too long.',
  option: 'That option cannot be added: it may be empty, too long, or already on the list.',
  label: 'The name for the seat needs 1 to 100 characters.',
  statement: 'The closing statement is too long (10,000 characters at most).',
  body: 'The message cannot be empty.',
};

/** A plain sentence for any error a form's action may meet; never the API's agent wording. */
export function plainMessage(error: unknown): string {
  if (!(error instanceof ApiError)) {
    return error instanceof TypeError
      ? 'The service could not be reached: check the connection and try again.'
      : error instanceof Error
        ? error.message
        : String(error);
  }
  const known = BY_CODE[error.code];
  if (known) return known;
  if (error.code === 'input.invalid') {
    return (
      (error.field && BY_FIELD[error.field]) ?? 'Something in the form is not right: check the fields and try again.'
    );
  }
  if (error.status >= 500) return 'The service had a problem: try again in a moment.';
  return 'That did not work: reload the page and try again.';
}

/** The field a refusal is about, when the form has one by that name. */
export function fieldOf(form: HTMLFormElement, error: unknown): HTMLElement | null {
  const name = error instanceof ApiError ? error.field : undefined;
  const field = name ? form.elements.namedItem(name) : null;
  return field instanceof HTMLElement ? field : null;
}

function clearFieldErrors(form: HTMLFormElement): void {
  for (const note of form.querySelectorAll('.field-error')) note.remove();
  for (const field of form.querySelectorAll('[aria-invalid="true"]')) {
    field.removeAttribute('aria-invalid');
    field.removeAttribute('aria-describedby');
  }
}

/** Puts `message` right after `field`, ties them together for assistive technology, and focuses the field. */
export function showFieldError(field: HTMLElement, message: string): void {
  const form = field.closest('form');
  if (form) clearFieldErrors(form);
  const note = document.createElement('p');
  note.className = 'field-error error';
  note.id = `${field.id || field.getAttribute('name') || 'field'}-error`;
  note.textContent = message;
  field.after(note);
  field.setAttribute('aria-invalid', 'true');
  field.setAttribute('aria-describedby', note.id);
  field.focus();
}

/** The browser's own verdict on a field, in words. */
function validityWords(field: HTMLInputElement | HTMLTextAreaElement): string {
  const label = field.labels?.[0]?.textContent?.replace(/\s*\(.*$/, '').trim() || 'This field';
  const v = field.validity;
  if (v.valueMissing) return `${label}: please fill this in.`;
  if (v.tooShort) return `${label} needs at least ${field.minLength} characters.`;
  if (v.tooLong) return `${label} can have at most ${field.maxLength} characters.`;
  if (v.rangeOverflow || v.rangeUnderflow) {
    return `${label} must be between ${(field as HTMLInputElement).min} and ${(field as HTMLInputElement).max}.`;
  }
  if (v.stepMismatch || v.badInput) return `${label} must be a whole number.`;
  return field.validationMessage;
}

/** Fields the browser refuses show the same plain message beside them; earlier messages clear on submit. */
export function wireFieldErrors(form: HTMLFormElement): void {
  let shown = false;
  form.addEventListener(
    'invalid',
    (event) => {
      const field = event.target as HTMLInputElement | HTMLTextAreaElement;
      // The first invalid field gets the message and the focus, as the browser itself does.
      if (shown) return;
      shown = true;
      queueMicrotask(() => {
        shown = false;
      });
      showFieldError(field, validityWords(field));
    },
    true,
  );
  form.addEventListener('submit', () => clearFieldErrors(form), true);
}
