/**
 * The home page's script (bundled for the browser, served as /assets/home.js): creates a room from
 * the form with POST /api/rooms, keeps the creator's seat in this browser for that room only
 * (src/pages/seat-store.ts) and opens the room's page. The password travels in the JSON body only.
 */
import { api, ApiError } from './browser/api.js';
import { saveSeat } from './browser/seat-store.js';

// The form arrives inert in a <template>: mounted only by this script, so without scripts no form
// can send the room password anywhere (a plain form would put it in a GET query).
const template = document.getElementById('create-template') as HTMLTemplateElement | null;
template?.after(template.content.cloneNode(true));
const form = document.getElementById('create-room') as HTMLFormElement | null;
const status = document.getElementById('create-status');

function field(name: string): string {
  const element = form?.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
  return element?.value ?? '';
}

async function create(): Promise<void> {
  if (!form || !status) return;
  const options = field('options')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const visibility = (form.querySelector('input[name="visibility"]:checked') as HTMLInputElement | null)?.value;
  const password = field('password');
  const config: Record<string, unknown> = {
    mechanism: field('mechanism'),
    visibility: visibility ?? 'unlisted',
    voting_window: Number(field('voting_window')),
    early_close: (document.getElementById('early_close') as HTMLInputElement | null)?.checked === true,
    settle_window: Number(field('settle_window')),
  };
  const displayName = field('display_name').trim() || 'host';
  const body: Record<string, unknown> = {
    question: field('question').trim(),
    options,
    config,
    display_name: displayName,
  };
  if (password && visibility === 'private') body.password = password;
  status.textContent = 'Creating the room…';
  try {
    const room = await api('POST', '/api/rooms', body);
    saveSeat(room.slug, {
      token: room.creator_token,
      participantId: room.participant_id,
      name: displayName,
      host: true,
    });
    location.assign(`/r/${encodeURIComponent(room.slug)}`);
  } catch (error) {
    status.textContent =
      error instanceof ApiError ? `The room was not created: ${error.message}` : 'The service could not be reached.';
    status.setAttribute('role', 'alert');
  }
}

form?.addEventListener('submit', (event) => {
  event.preventDefault();
  void create();
});
