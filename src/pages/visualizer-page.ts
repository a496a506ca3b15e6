/**
 * The visualizer's script (bundled for the browser). It reads a room's actors from
 * GET /api/rooms/{slug}/machine, marks the active state nodes of each chart (`data-current`,
 * `aria-current`), follows the room over SSE, and lets the reader step back through the timeline.
 * Each chart can be zoomed and panned (chart-zoom.ts), so it stays readable on a phone.
 * A credential typed into the page lives in this module's memory only: never in a URL or storage.
 */
import { type Auth, ConclaveClient, ConclaveError, type RoomMachine } from '../client/index.js';
import { activeIds } from '../visualizer/chart-model.js';
import { loadSeat } from './browser/seat-store.js';
import { type ChartZoom, enableChartZoom } from './chart-zoom.js';
import { coalesce } from './coalesce.js';

type Machine = RoomMachine;
type Step = Machine['timeline'][number];

/** Decision charts drawn at most; older decisions are listed in the timeline only. */
const MAX_DECISION_CHARTS = 12;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const status = $('status');
const mode = $('mode');
const timeline = $('timeline');
const goLive = $<HTMLButtonElement>('go-live');

const client = new ConclaveClient({ baseUrl: location.origin });
let auth: Auth = {};
let slug: string | null = null;
let machine: Machine | null = null;
/** The selected timeline step (index), or null when following live. */
let selected: number | null = null;
/** While following live: the new step being shown on the way to the current state. */
let playing: number | null = null;

/**
 * How long each new step shows while the page catches up: a turn can pass through states it does
 * not rest in (settling → sealed → resolved in one commit), and the reader should see each.
 */
const STEP_DWELL_MS = 300;
let following: AbortController | null = null;

function markCurrent(svg: Element, active: readonly string[]): void {
  for (const node of svg.querySelectorAll<SVGGElement>('[data-state]')) {
    if (active.includes(node.dataset.state ?? '')) {
      node.setAttribute('data-current', 'true');
      node.setAttribute('aria-current', 'step');
    } else {
      node.removeAttribute('data-current');
      node.removeAttribute('aria-current');
    }
  }
}

const nameOf = (id: string) => id.split('.').slice(1).join(' › ');

/** Where every actor rested right after timeline step `index` (all steps when null). */
function statesAt(m: Machine, index: number | null): { room: string; decisions: Map<string, string> } {
  if (index === null) {
    return { room: m.room.state, decisions: new Map(m.decisions.map((d) => [d.decision_id, d.state])) };
  }
  let room = 'room.active.open';
  const decisions = new Map<string, string>();
  for (const step of m.timeline.slice(0, index + 1)) {
    if (step.chart === 'room') room = step.to;
    else if (step.decision_id) decisions.set(step.decision_id, step.to);
  }
  return { room, decisions };
}

/**
 * Decision charts whose current state has not been scrolled into view yet. On a narrow screen a
 * chart is wider than its frame; it is centred on its current state once, when first shown, and
 * after that the reader's own panning is left alone.
 */
const unrevealed = new WeakMap<HTMLElement, ChartZoom>();

function revealOnce(figure: HTMLElement): void {
  const zoom = unrevealed.get(figure);
  const leaf = figure.querySelector('[data-current="true"]:not(.compound)');
  if (!zoom || !leaf || figure.hidden) return;
  zoom.reveal(leaf);
  unrevealed.delete(figure);
}

function decisionChart(id: string, seq: number, question: string): HTMLElement {
  const existing = document.querySelector<HTMLElement>(`[data-decision-id="${CSS.escape(id)}"]`);
  if (existing) return existing;
  const figure = document.createElement('figure');
  figure.className = 'chart-box';
  figure.dataset.decisionId = id;
  const caption = document.createElement('figcaption');
  caption.innerHTML = `Decision ${seq}: <span class="q"></span> — <span class="state-text"></span>`;
  caption.querySelector('.q')!.textContent = question;
  // Each copy of the drawing gets its own ids (marker, title) so the document stays valid.
  const template = $<HTMLTemplateElement>('decision-chart-template').innerHTML.replaceAll(
    'decision-chart-title',
    `decision-${seq}-chart-title`,
  );
  figure.append(caption);
  figure.insertAdjacentHTML('beforeend', template.replaceAll('arrow-decision', `arrow-decision-${seq}`));
  $('decision-charts').append(figure);
  const zoom = enableChartZoom(figure);
  if (zoom) unrevealed.set(figure, zoom);
  return figure;
}

function render(): void {
  if (!machine) return;
  const m = machine;
  const at = statesAt(m, selected ?? playing);
  markCurrent($('room-chart').querySelector('svg')!, activeIds(m.charts.room, at.room));
  $('room-state-text').textContent = nameOf(at.room);
  const shown = m.decisions.slice(-MAX_DECISION_CHARTS);
  $('decision-chart-idle').hidden = shown.length > 0;
  for (const figure of document.querySelectorAll<HTMLElement>('#decision-charts [data-decision-id]')) {
    if (!shown.some((d) => d.decision_id === figure.dataset.decisionId)) figure.remove();
  }
  for (const decision of shown) {
    const figure = decisionChart(decision.decision_id, decision.seq, decision.question);
    const node = at.decisions.get(decision.decision_id);
    figure.hidden = node === undefined;
    markCurrent(figure.querySelector('svg')!, node ? activeIds(m.charts.decision, node) : []);
    figure.querySelector('.state-text')!.textContent = node ? nameOf(node) : 'not opened yet';
    revealOnce(figure);
  }
  renderTimeline(m.timeline);
  mode.textContent =
    selected !== null
      ? `Time travel: right after event ${m.timeline[selected]!.seq} (${m.timeline[selected]!.event_type}).`
      : playing !== null
        ? `Live: room ${m.slug}, catching up (${describe(m.timeline[playing]!, m)}).`
        : `Live: room ${m.slug}, through event ${m.current_through}.`;
  goLive.disabled = selected === null;
}

function describe(step: Step, m: Machine): string {
  const who =
    step.chart === 'room'
      ? 'room'
      : `decision ${m.decisions.find((d) => d.decision_id === step.decision_id)?.seq ?? '?'}`;
  return `#${step.seq} ${step.event_type}: ${who} ${step.from ? nameOf(step.from) : 'start'} → ${nameOf(step.to)} (${step.cause})`;
}

function renderTimeline(steps: readonly Step[]): void {
  const m = machine!;
  while (timeline.children.length > steps.length) timeline.lastElementChild!.remove();
  steps.forEach((step, index) => {
    let item = timeline.children[index] as HTMLLIElement | undefined;
    if (!item) {
      item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.setAttribute('data-timeline-entry', '');
      button.addEventListener('click', () => {
        selected = index;
        render();
      });
      item.append(button);
      timeline.append(item);
    }
    const button = item.firstElementChild as HTMLButtonElement;
    button.textContent = describe(step, m);
    button.dataset.seq = String(step.seq);
    button.title = step.occurred_at;
    button.setAttribute('aria-pressed', String(selected === index));
  });
}

async function refresh(): Promise<void> {
  if (!slug) return;
  try {
    const seen = machine?.slug === slug ? machine.timeline.length : null;
    machine = await client.getRoomMachine({ slug, auth });
    status.textContent = '';
    if (seen !== null) {
      for (let step = seen; step < machine.timeline.length - 1 && selected === null; step++) {
        playing = step;
        render();
        await new Promise((resolve) => setTimeout(resolve, STEP_DWELL_MS));
      }
    }
    playing = null;
    render();
  } catch (error) {
    showError(error);
  }
}

function showError(error: unknown): void {
  clearRoom();
  status.textContent =
    error instanceof ConclaveError
      ? `${error.message}${error.code.startsWith('auth.') || error.status === 401 || error.status === 403 ? ' This room needs a credential: enter a participant token or the room password above.' : ''}`
      : 'The service could not be reached.';
}

/** Shows nothing of any room: the bare charts. */
function clearRoom(): void {
  machine = null;
  mode.textContent = 'Nothing of this room is shown.';
  for (const figure of document.querySelectorAll('#decision-charts [data-decision-id]')) figure.remove();
  markCurrent($('room-chart').querySelector('svg')!, []);
  $('room-state-text').textContent = '–';
  $('decision-chart-idle').hidden = false;
  timeline.replaceChildren();
}

/**
 * The join sliver of a room that is not public, from the `application/svc+json` state of its room
 * page (docs/architecture.md, Pages: the visualizer and the room page); null for a public room, or when the page cannot say.
 */
async function joinSliver(room: string): Promise<string | null> {
  const response = await fetch(`/r/${encodeURIComponent(room)}`).catch(() => null);
  if (!response?.ok) return null;
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  const state = JSON.parse(page.getElementById('room-state')?.textContent ?? '{}') as {
    visibility?: string;
    join_required?: boolean;
    password_supported?: boolean;
    api?: { join?: string };
  };
  if (!state.join_required) return null;
  return `This room is ${state.visibility}. Join it to read it (POST ${state.api?.join}), or enter a participant token${state.password_supported ? ' or the room password' : ''} above: this room needs a credential.`;
}

/** Re-reads the machine on every event of the room, as long as the room stays selected. */
async function follow(room: string, signal: AbortSignal): Promise<void> {
  const update = coalesce(refresh);
  try {
    for await (const _event of client.streamEvents({
      slug: room,
      since_seq: machine?.current_through ?? 0,
      auth,
      signal,
    })) {
      if (signal.aborted) return;
      update();
    }
  } catch (error) {
    if (!signal.aborted) status.textContent = `Live updates stopped: ${(error as Error).message}`;
  }
}

async function open(room: string): Promise<void> {
  following?.abort();
  // A member who comes from their room page reads as their seat, kept in this browser as the room page keeps it.
  const seat = loadSeat(room);
  const token = $<HTMLInputElement>('room-token').value.trim() || seat?.token || '';
  const password = $<HTMLInputElement>('room-password').value;
  auth = { ...(token ? { token } : {}), ...(password ? { password } : {}) };
  slug = room;
  selected = null;
  const url = new URL(location.href);
  url.searchParams.set('room', room);
  history.replaceState(null, '', url);
  status.textContent = `Opening ${room}…`;
  if (!token && !password) {
    // Without a credential, learn from the room page's machine-readable state whether the room can be
    // read at all, rather than send a read the service is bound to refuse.
    const sliver = await joinSliver(room);
    if (sliver) {
      clearRoom();
      status.textContent = sliver;
      slug = null;
      return;
    }
  }
  await refresh();
  if (!machine) return;
  following = new AbortController();
  void follow(room, following.signal);
}

enableChartZoom($('room-chart'));
enableChartZoom($('decision-chart-idle'));

$('open-room').addEventListener('click', () => {
  const room = $<HTMLInputElement>('room-slug').value.trim();
  if (room) void open(room);
});
for (const id of ['room-slug', 'room-token', 'room-password']) {
  $(id).addEventListener('keydown', (event) => {
    if (event.key === 'Enter') $('open-room').click();
  });
}
goLive.addEventListener('click', () => {
  selected = null;
  render();
});

const initial = new URLSearchParams(location.search).get('room');
if (initial) {
  $<HTMLInputElement>('room-slug').value = initial;
  void open(initial);
}
