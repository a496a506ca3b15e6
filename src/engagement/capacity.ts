/**
 * A ceiling on parked connections (long-polls and SSE streams) per process: past it, new ones are
 * refused with 503 at once instead of piling up until memory runs out.
 */
import { protocolError, type ProtocolError } from '../errors.js';

export class ParkingCapacity {
  private used = 0;

  constructor(private readonly max: number) {}

  /** Takes a place, or throws the 503 envelope when none is left. */
  enter(): void {
    if (this.used >= this.max) throw overloaded();
    this.used++;
  }

  leave(): void {
    this.used = Math.max(0, this.used - 1);
  }

  get parked(): number {
    return this.used;
  }
}

export function overloaded(): ProtocolError {
  return protocolError(
    'vendor:conclave:unavailable',
    'The service is holding as many waiting connections as it can right now. Retry after the pause in Retry-After.',
    {
      hint: 'Retry in a second; a long-poll that times out normally is the usual way to wait.',
      headers: { 'retry-after': '1' },
    },
  );
}
