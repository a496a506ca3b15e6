/** Time enters the service only through a Clock, so tests can drive windows without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to; used by tests and replays. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.parse('2026-05-01T10:00:00.000Z')) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
