/**
 * The ballot each mechanism needs, as a form a person fills in, and the choice it sends: one option
 * (radio buttons), approval (checkboxes), a ranking (reordered by drag or by keyboard: arrow keys on
 * an item, or its move buttons), scores 0–5, or quadratic credits with the running cost shown.
 */
import { escapeHtml } from '../room-render.js';

export type BallotKind = 'single' | 'approval' | 'ranked' | 'score' | 'quadratic';

export const CREDITS = 9;

export function ballotKind(mechanism: string, agreement: boolean): BallotKind {
  if (agreement) return 'single';
  switch (mechanism) {
    case 'approval':
      return 'approval';
    case 'ranked_choice':
    case 'ranked_pairwise':
      return 'ranked';
    case 'score_vote':
      return 'score';
    case 'quadratic_vote':
      return 'quadratic';
    default:
      return 'single';
  }
}

const HOW: Record<BallotKind, string> = {
  single: 'Pick one option.',
  approval: 'Tick every option you approve of.',
  ranked:
    'Put the options in your order, best first: drag them, or focus one and press the up and down arrow keys (or use its buttons).',
  score: 'Give each option a score from 0 to 5.',
  quadratic: `Spread up to ${CREDITS} credits. Each option counts the square root of its credits, so piling credits on one option costs more and more.`,
};

export function ballotFields(kind: BallotKind, options: readonly string[]): string {
  const id = (i: number) => `ballot-${i}`;
  let fields: string;
  switch (kind) {
    case 'single':
    case 'approval': {
      const type = kind === 'single' ? 'radio' : 'checkbox';
      fields = options
        .map(
          (o, i) =>
            `<label class="inline"><input type="${type}" name="choice" value="${i}" id="${id(i)}"> ${escapeHtml(o)}</label>`,
        )
        .join('');
      break;
    }
    case 'ranked':
      fields = `<ol class="ranking" id="ranking" aria-label="Your ranking, best first">${options
        .map(
          (o, i) =>
            `<li tabindex="0" draggable="true" data-index="${i}" aria-roledescription="rankable item"><span class="rank">${i + 1}.</span><span class="text">${escapeHtml(o)}</span><button type="button" data-move="-1" aria-label="Move ${escapeHtml(o)} up">↑</button><button type="button" data-move="1" aria-label="Move ${escapeHtml(o)} down">↓</button></li>`,
        )
        .join('')}</ol><p id="ranking-status" class="muted" role="status" aria-live="polite"></p>`;
      break;
    case 'score':
    case 'quadratic': {
      const max = kind === 'score' ? 5 : CREDITS;
      fields = `<div class="ballot-grid">${options
        .map(
          (o, i) =>
            `<label for="${id(i)}">${escapeHtml(o)}</label><input type="number" id="${id(i)}" name="value" data-index="${i}" min="0" max="${max}" step="1" value="0" inputmode="numeric">`,
        )
        .join(
          '',
        )}</div>${kind === 'quadratic' ? `<p id="credit-cost" role="status" aria-live="polite">Credits spent: 0 of ${CREDITS}.</p>` : ''}`;
      break;
    }
  }
  return `<fieldset><legend>Options</legend><p class="muted">${HOW[kind]}</p>${fields}</fieldset>`;
}

function renumber(list: HTMLElement): void {
  list.querySelectorAll<HTMLElement>('li').forEach((li, i) => {
    const rank = li.querySelector('.rank');
    if (rank) rank.textContent = `${i + 1}.`;
  });
}

function move(list: HTMLElement, item: HTMLElement, by: number): void {
  const items = [...list.querySelectorAll<HTMLElement>('li')];
  const from = items.indexOf(item);
  const to = Math.max(0, Math.min(items.length - 1, from + by));
  if (to === from) return;
  const target = items[to]!;
  if (by < 0) list.insertBefore(item, target);
  else list.insertBefore(item, target.nextSibling);
  renumber(list);
  const status = document.getElementById('ranking-status');
  if (status) status.textContent = `${item.querySelector('.text')?.textContent ?? ''} is now number ${to + 1}.`;
}

/** Wires the ranking's keyboard, buttons and drag-and-drop, and the quadratic running cost. */
export function wireBallot(form: HTMLElement, kind: BallotKind): void {
  if (kind === 'ranked') {
    const list = form.querySelector<HTMLElement>('#ranking');
    if (!list) return;
    list.addEventListener('keydown', (event) => {
      const item = (event.target as HTMLElement).closest('li');
      if (!item || event.target !== item) return;
      if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
        event.preventDefault();
        move(list, item, event.key === 'ArrowUp' ? -1 : 1);
        item.focus();
      }
    });
    list.addEventListener('click', (event) => {
      const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-move]');
      const item = button?.closest('li');
      if (!button || !item) return;
      move(list, item, Number(button.dataset.move));
      button.focus();
    });
    let dragged: HTMLElement | null = null;
    list.addEventListener('dragstart', (event) => {
      dragged = (event.target as HTMLElement).closest('li');
      dragged?.classList.add('dragging');
      event.dataTransfer?.setData('text/plain', '');
    });
    list.addEventListener('dragover', (event) => {
      event.preventDefault();
      const over = (event.target as HTMLElement).closest('li');
      if (!dragged || !over || over === dragged) return;
      const after = event.clientY > over.getBoundingClientRect().top + over.offsetHeight / 2;
      list.insertBefore(dragged, after ? over.nextSibling : over);
      renumber(list);
    });
    list.addEventListener('dragend', () => {
      dragged?.classList.remove('dragging');
      dragged = null;
    });
  }
  if (kind === 'quadratic') {
    const cost = form.querySelector('#credit-cost');
    form.addEventListener('input', () => {
      const spent = [...form.querySelectorAll<HTMLInputElement>('input[name="value"]')].reduce(
        (sum, input) => sum + Math.max(0, Math.floor(Number(input.value) || 0)),
        0,
      );
      if (cost) {
        cost.textContent = `Credits spent: ${spent} of ${CREDITS}.${spent > CREDITS ? ' That is too many: take some back.' : ''}`;
        cost.classList.toggle('error', spent > CREDITS);
      }
      // An over-spent ballot cannot be sent: the button waits until credits are taken back.
      for (const button of form.querySelectorAll<HTMLButtonElement>('button[type="submit"]')) {
        button.disabled = spent > CREDITS;
      }
    });
  }
}

/** The choice the form holds, as the choose API takes it (option texts), or an error to show. */
export function readBallot(form: HTMLElement, kind: BallotKind, options: readonly string[]): unknown {
  switch (kind) {
    case 'single': {
      const picked = form.querySelector<HTMLInputElement>('input[name="choice"]:checked');
      if (!picked) throw new Error('Pick an option first.');
      return options[Number(picked.value)];
    }
    case 'approval': {
      const picked = [...form.querySelectorAll<HTMLInputElement>('input[name="choice"]:checked')];
      if (picked.length === 0) throw new Error('Tick at least one option.');
      return picked.map((input) => options[Number(input.value)]);
    }
    case 'ranked':
      return [...form.querySelectorAll<HTMLElement>('#ranking li')].map((li) => options[Number(li.dataset.index)]);
    case 'score':
    case 'quadratic': {
      const values: Record<string, number> = {};
      for (const input of form.querySelectorAll<HTMLInputElement>('input[name="value"]')) {
        const value = Number(input.value) || 0;
        if (kind === 'score' || value > 0) values[options[Number(input.dataset.index)]!] = value;
      }
      return values;
    }
  }
}

/** Sets the form to a ballot already cast (as the views give it: option text, or JCS text), so a revision starts from it. */
export function prefillBallot(form: HTMLElement, kind: BallotKind, options: readonly string[], cast: unknown): void {
  let ballot: unknown = cast;
  if (typeof cast === 'string' && (cast.startsWith('[') || cast.startsWith('{'))) {
    try {
      ballot = JSON.parse(cast);
    } catch {
      return;
    }
  }
  const indexOf = (text: unknown) => options.indexOf(String(text));
  if (kind === 'single' || kind === 'approval') {
    for (const text of Array.isArray(ballot) ? ballot : [ballot]) {
      const input = form.querySelector<HTMLInputElement>(`input[name="choice"][value="${indexOf(text)}"]`);
      if (input) input.checked = true;
    }
  } else if (kind === 'ranked' && Array.isArray(ballot)) {
    const list = form.querySelector<HTMLElement>('#ranking');
    for (const text of [...ballot].reverse()) {
      const item = list?.querySelector<HTMLElement>(`li[data-index="${indexOf(text)}"]`);
      if (list && item) list.prepend(item);
    }
    if (list) renumber(list);
  } else if (ballot && typeof ballot === 'object') {
    for (const [text, value] of Object.entries(ballot)) {
      const input = form.querySelector<HTMLInputElement>(`input[name="value"][data-index="${indexOf(text)}"]`);
      if (input) input.value = String(value);
    }
    form.dispatchEvent(new Event('input'));
  }
}
