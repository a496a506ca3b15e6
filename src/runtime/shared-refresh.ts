/**
 * Per-key refreshes that run one at a time and are shared. A caller arriving while a refresh of its
 * key runs does not join that one (it may have read the store before the caller's write landed
 * elsewhere): it shares the next one, which starts when the running one ends. So every caller gets
 * the result of a refresh begun after it asked, and however many ask meanwhile, at most two
 * refreshes of a key are pending: the running one and the one everybody waits for next.
 */
export class SharedRefresh<T> {
  private readonly flights = new Map<string, { running: Promise<T>; next: Promise<T> | null }>();

  run(key: string, refresh: () => Promise<T>): Promise<T> {
    const flight = this.flights.get(key);
    if (!flight) return this.start(key, refresh);
    const settled = () => undefined;
    flight.next ??= flight.running.then(settled, settled).then(() => this.start(key, refresh));
    return flight.next;
  }

  private start(key: string, refresh: () => Promise<T>): Promise<T> {
    const running = Promise.resolve().then(refresh);
    const flight = { running, next: null as Promise<T> | null };
    this.flights.set(key, flight);
    const done = () => {
      // A queued refresh replaces this flight when it starts; otherwise the key is idle again.
      if (this.flights.get(key) === flight && flight.next === null) this.flights.delete(key);
    };
    void running.then(done, done);
    return running;
  }
}
