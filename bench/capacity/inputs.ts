/**
 * What each measurement of the capacity case hands to the arithmetic (docs/operators.md, Capacity).
 * Every step is one async function of the running deployment that returns its table rows and its
 * figures, so a better measurement replaces a step without touching the others.
 */
import type { BenchRow } from '../table.js';
import type { Deployment } from './deployment.js';

export interface StepResult<Figures> {
  rows: BenchRow[];
  figures: Figures;
}

export type Step<Figures> = (deployment: Deployment) => Promise<StepResult<Figures>>;

/** ROOM BYTES: Redis bytes of a typical room (10 members, 5 decided decisions, 45 messages). */
export interface RoomBytes {
  liveBytesPerRoom: number;
  concludedBytesPerRoom: number;
}

/**
 * NOTICES: how many commit notices a service process receives, against the commits made by the
 * whole deployment (the busiest process's: their ratio is the share of commits a process hears,
 * which with per-room sharded channels follows the share of rooms it waits on).
 */
export interface NoticeLoad {
  commitsPerSecond: number;
  noticesPerProcessPerSecond: number;
}

/** Writes the deployment sustained, and what each cost Redis and the service processes. */
export interface WriteCost {
  writesPerSecond: number;
  redisCpuMsPerWrite: number;
  serviceCpuMsPerWrite: number;
  /** The floor: script calls (EVAL of one SET) a second all masters took at once, and their CPU each. */
  floorEvalsPerSecond: number;
  floorRedisCpuMsPerEval: number;
}

/** Receipts the log sequenced a second while it worked through a backlog. */
export interface IntegrationRate {
  receiptsPerSecond: number;
}

export interface StartUp {
  readyMs: number;
  floorMs: number;
}

/** What one held event stream costs its process: heap in use (an upper bound, bench/capacity/stream-memory.ts). */
export interface StreamMemory {
  bytesPerStream: number;
}

export type CapacityFigures = RoomBytes & NoticeLoad & WriteCost & IntegrationRate & StartUp & StreamMemory;

/**
 * The rows the case prints, by the start of their case name: docs/operators.md (Capacity) lists
 * each, and test/unit/capacity-doc.test.ts keeps the two in step. A step that replaces another
 * names its rows the same.
 */
export const ROWS = {
  liveRoom: 'capacity: redis bytes per live room',
  concludedRoom: 'capacity: redis bytes per concluded room',
  notices: 'capacity: commit notices per process',
  evalFloor: 'capacity floor: redis EVAL of one SET',
  writes: 'capacity: choose across rooms',
  integration: 'capacity: log integration',
  streamMemory: 'capacity: process memory per SSE stream',
  startFloor: 'capacity floor: bare node:http start',
  startUp: 'capacity: service process start to ready',
  plan: 'capacity plan:',
} as const;
