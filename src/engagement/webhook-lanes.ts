/**
 * Which due webhook delivery goes next, so that no room and no receiver can take the lanes everyone
 * shares (docs/architecture.md, Engagement):
 *
 * - rooms take turns (round robin); within a room the clients that registered its subscriptions take
 *   turns, within a client's subscriptions their receiving origins, and within an origin its endpoints (webhook URLs);
 * - at most `perRoom` attempts of one room, `perOrigin` to one receiving origin and `perEndpoint` to
 *   one URL are in flight, out of `total` for the process; and at most `perClient` for the
 *   subscriptions one client registered (`WebhookRecord.client`, a hash of its address group),
 *   whichever rooms they are in, since rooms are free to create: without it, one client making four
 *   rooms of webhooks to fresh silent origins could fill every lane, each origin until its breaker
 *   trips, for as long as it kept adding origins. A subscription stored before clients were recorded
 *   has none and is held only by the other limits (its room's share already bounds it, and no new
 *   subscription is made without a client);
 * - an origin whose breaker is open (see webhook-breaker.ts) gets nothing: its deliveries come out as
 *   `park` picks, to be moved to the end of the cool-down in the outbox.
 *
 * A delivery that cannot go yet waits here, in memory and unclaimed, so a process that stops loses
 * nothing and another process may take it meanwhile. Pure bookkeeping: no I/O, no clock of its own.
 */
import { type OriginBreaker, originOf } from './webhook-breaker.js';

export interface LaneLimits {
  total: number;
  perRoom: number;
  perOrigin: number;
  perEndpoint: number;
  perClient: number;
}

/**
 * 128 attempts in flight per process is 128 sockets: little for the process, and enough that a
 * 1,000-endpoint fan-out to a fast receiver lands in about a second. One room gets a quarter of them,
 * so it takes four rooms of black holes, registered by four clients, to fill the process, and only
 * until their origins are parked (two timeouts each). One origin gets half a room's share, so dead
 * endpoints registered first leave the other half to the room's live ones. Two per URL keeps one
 * subscription's backlog from crowding its neighbours at the same receiver. One client (the address
 * group that registered the subscriptions) gets one room's share, 32, however many rooms it makes: a
 * quarter of the process, so the other clients keep at least 96 lanes, and a client's single room is
 * held no more than before.
 */
export const LANE_LIMITS: LaneLimits = { total: 128, perRoom: 32, perOrigin: 16, perEndpoint: 2, perClient: 32 };

/** The group of a room's subscriptions stored without a client: held by no client's share. */
const NO_CLIENT = '';

export interface Waiting<T> {
  key: string;
  slug: string;
  url: string;
  /** Who registered the subscription (`WebhookRecord.client`); absent for one stored before. */
  client?: string;
  item: T;
}

export type LanePick<T> = { kind: 'send'; entry: Waiting<T> } | { kind: 'park'; entry: Waiting<T>; until: number };

export class DeliveryLanes<T> {
  /**
   * Room → client → origin → endpoint URL → waiting deliveries. Map order is the turn order: whoever
   * went moves last. Grouping by client and by origin lets a client at its share, or a busy receiver,
   * be skipped in one step, however many URLs it has.
   */
  private readonly rooms = new Map<string, Map<string, Map<string, Map<string, Waiting<T>[]>>>>();
  private readonly keys = new Set<string>();
  /** Deliveries held per room, waiting or in flight. */
  private readonly held = new Map<string, number>();
  private inFlight = 0;
  private readonly byRoom = new Map<string, number>();
  private readonly byOrigin = new Map<string, number>();
  private readonly byEndpoint = new Map<string, number>();
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly limits: LaneLimits,
    private readonly breaker: OriginBreaker,
  ) {}

  /** Deliveries waiting or in flight. */
  get size(): number {
    return this.keys.size;
  }

  get sending(): number {
    return this.inFlight;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Deliveries of one room held here, waiting or in flight. */
  heldFor(slug: string): number {
    return this.held.get(slug) ?? 0;
  }

  /** Queues a delivery behind the others of its endpoint; false when it is already here. */
  add(entry: Waiting<T>): boolean {
    if (this.keys.has(entry.key)) return false;
    this.keys.add(entry.key);
    bump(this.held, entry.slug, 1);
    const clients = inner(this.rooms, entry.slug, () => new Map());
    const origins = inner(clients, entry.client ?? NO_CLIENT, () => new Map());
    const endpoints = inner(origins, originOf(entry.url), () => new Map());
    inner(endpoints, entry.url, (): Waiting<T>[] => []).push(entry);
    return true;
  }

  /**
   * The next delivery to send (counted in flight until `finish`), or to park; null when everything
   * waiting is held back by a limit.
   */
  next(now: number): LanePick<T> | null {
    if (this.inFlight >= this.limits.total) return null;
    for (const [slug, clients] of this.rooms) {
      if ((this.byRoom.get(slug) ?? 0) >= this.limits.perRoom) continue;
      for (const [client, origins] of clients) {
        // A parked origin's deliveries are still moved out while their client is at its share: parking
        // takes no lane.
        const clientFull = client !== NO_CLIENT && (this.byClient.get(client) ?? 0) >= this.limits.perClient;
        for (const [origin, endpoints] of origins) {
          const gate = this.breaker.gate(origin, now);
          if (gate.kind === 'parked') {
            const [url, queue] = endpoints.entries().next().value!;
            const entry = this.take(slug, client, origin, url, queue);
            this.keys.delete(entry.key);
            bump(this.held, slug, -1);
            return { kind: 'park', entry, until: gate.until };
          }
          if (clientFull) continue;
          const originCap = gate.kind === 'probe' ? 1 : this.limits.perOrigin;
          if ((this.byOrigin.get(origin) ?? 0) >= originCap) continue;
          for (const [url, queue] of endpoints) {
            if ((this.byEndpoint.get(url) ?? 0) >= this.limits.perEndpoint) continue;
            const entry = this.take(slug, client, origin, url, queue);
            this.inFlight++;
            bump(this.byRoom, slug, 1);
            if (client !== NO_CLIENT) bump(this.byClient, client, 1);
            bump(this.byOrigin, origin, 1);
            bump(this.byEndpoint, url, 1);
            return { kind: 'send', entry };
          }
        }
      }
    }
    return null;
  }

  /** A sent delivery's attempt is over: its lanes are free. */
  finish(entry: Waiting<T>): void {
    this.keys.delete(entry.key);
    bump(this.held, entry.slug, -1);
    this.inFlight--;
    bump(this.byRoom, entry.slug, -1);
    if ((entry.client ?? NO_CLIENT) !== NO_CLIENT) bump(this.byClient, entry.client!, -1);
    bump(this.byOrigin, originOf(entry.url), -1);
    bump(this.byEndpoint, entry.url, -1);
  }

  /**
   * Removes the endpoint's first delivery, and moves the room, client, origin and endpoint to the back
   * of their turns.
   */
  private take(slug: string, client: string, origin: string, url: string, queue: Waiting<T>[]): Waiting<T> {
    const clients = this.rooms.get(slug)!;
    const origins = clients.get(client)!;
    const endpoints = origins.get(origin)!;
    const entry = queue.shift()!;
    endpoints.delete(url);
    if (queue.length > 0) endpoints.set(url, queue);
    origins.delete(origin);
    if (endpoints.size > 0) origins.set(origin, endpoints);
    clients.delete(client);
    if (origins.size > 0) clients.set(client, origins);
    this.rooms.delete(slug);
    if (clients.size > 0) this.rooms.set(slug, clients);
    return entry;
  }
}

/** The value under `key`, made and added (at the end of the turn order) when there is none. */
function inner<V>(map: Map<string, V>, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
