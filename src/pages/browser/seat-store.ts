/**
 * A person's seat in one room, kept in this browser: the participant token under a key that names
 * the room, so a seat is only ever sent to the room it belongs to, and "leave this device" forgets it.
 * The token travels only in an Authorization header — never in a URL, a cookie or a log.
 */
export interface Seat {
  token: string;
  participantId: string;
  name: string;
  /** The seat that created the room (the page shows it the host controls). */
  host: boolean;
}

const key = (slug: string) => `conclave.seat.${slug}`;

export function loadSeat(slug: string): Seat | null {
  try {
    const raw = localStorage.getItem(key(slug));
    if (!raw) return null;
    const seat = JSON.parse(raw) as Partial<Seat>;
    return typeof seat.token === 'string' && typeof seat.participantId === 'string'
      ? {
          token: seat.token,
          participantId: seat.participantId,
          name: String(seat.name ?? ''),
          host: seat.host === true,
        }
      : null;
  } catch {
    return null;
  }
}

export function saveSeat(slug: string, seat: Seat): void {
  localStorage.setItem(key(slug), JSON.stringify(seat));
}

export function forgetSeat(slug: string): void {
  localStorage.removeItem(key(slug));
  localStorage.removeItem(`conclave.cast.${slug}`);
}

/** The ballot this browser last cast per decision (shown as "your choice" when the room hides choices). */
export function rememberCast(slug: string, decision: number, text: string): void {
  const all = readCasts(slug);
  all[String(decision)] = text;
  localStorage.setItem(`conclave.cast.${slug}`, JSON.stringify(all));
}

export function readCasts(slug: string): Record<string, string> {
  try {
    return JSON.parse(localStorage.getItem(`conclave.cast.${slug}`) ?? '{}') as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * A seat's recovery link (docs/concepts.md, Seats, members and roles): the room's page with the seat in the URL
 * fragment, which browsers never send to a server — not in a request, not in a Referer. Whoever opens
 * it takes this seat on that device; the token is the same one this browser holds.
 */
export function recoveryLink(slug: string, seat: Seat): string {
  const fragment = new URLSearchParams({ seat: seat.token, id: seat.participantId, name: seat.name });
  if (seat.host) fragment.set('host', '1');
  return `${location.origin}/r/${encodeURIComponent(slug)}#${fragment.toString()}`;
}

/** The seat a recovery link carries, read once and removed from the address bar; null when there is none. */
export function takeRecoveredSeat(): Seat | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const token = fragment.get('seat');
  const participantId = fragment.get('id');
  if (!token || !participantId) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return { token, participantId, name: fragment.get('name') ?? '', host: fragment.get('host') === '1' };
}
