/**
 * The capacity arithmetic of docs/operators.md (Capacity), from one run's figures: how many Redis
 * masters (by memory and by CPU), how many service processes, and what each process carries, for a
 * number of rooms and a write rate. The assumptions are the operator's, named here and in the doc.
 */
import type { CapacityFigures } from './inputs.js';

export const ASSUMPTIONS = {
  /** Rooms with an open decision or recent activity; the rest are concluded. */
  liveFraction: 0.01,
  /**
   * Memory a master may fill with data: a 32 GiB machine, half of it kept free for the AOF rewrite's
   * copy-on-write fork and the allocator's fragmentation.
   */
  masterDataBytes: 16 * 2 ** 30,
  /** Share of one core a master (one thread for commands) or a service process may be kept busy at. */
  busyShare: 0.7,
  /** Parked waits a process holds at most (MAX_PARKED_CONNECTIONS' default). */
  parkedPerProcess: 20_000,
  /**
   * Receipts per write, from the typical room's life: 110 writes (create, 9 joins, 4 asks,
   * 45 messages, 50 choices, close) seal 6 receipts (5 decisions and the conclusion).
   */
  receiptsPerWrite: 6 / 110,
};

export interface RoomsPlan {
  rooms: number;
  redisBytes: number;
  mastersForMemory: number;
}

export interface WritesPlan {
  writesPerSecond: number;
  redisCores: number;
  mastersForCpu: number;
  serviceCores: number;
  processesForWrites: number;
  noticesPerProcessPerSecond: number;
  receiptsPerSecond: number;
  /** The one integrator's rate over the receipts this write rate seals. */
  integrationHeadroom: number;
  /** Resident memory of a process holding its whole parking pool of streams. */
  parkedBytesPerProcess: number;
}

export function planRooms(figures: CapacityFigures, rooms: number): RoomsPlan {
  const live = rooms * ASSUMPTIONS.liveFraction;
  const redisBytes = live * figures.liveBytesPerRoom + (rooms - live) * figures.concludedBytesPerRoom;
  return { rooms, redisBytes, mastersForMemory: Math.max(3, Math.ceil(redisBytes / ASSUMPTIONS.masterDataBytes)) };
}

export function planWrites(figures: CapacityFigures, writesPerSecond: number): WritesPlan {
  const redisCores = (writesPerSecond * figures.redisCpuMsPerWrite) / 1000;
  const serviceCores = (writesPerSecond * figures.serviceCpuMsPerWrite) / 1000;
  const receiptsPerSecond = writesPerSecond * ASSUMPTIONS.receiptsPerWrite;
  return {
    writesPerSecond,
    redisCores,
    mastersForCpu: Math.max(3, Math.ceil(redisCores / ASSUMPTIONS.busyShare)),
    serviceCores,
    processesForWrites: Math.ceil(serviceCores / ASSUMPTIONS.busyShare),
    // A process hears the commits of the rooms it waits on (per-room sharded channels): the deployment's
    // commits times the share measured, which is the share of rooms the measured process waited on.
    noticesPerProcessPerSecond: writesPerSecond * (figures.noticesPerProcessPerSecond / figures.commitsPerSecond),
    receiptsPerSecond,
    integrationHeadroom: figures.receiptsPerSecond / receiptsPerSecond,
    parkedBytesPerProcess: ASSUMPTIONS.parkedPerProcess * figures.bytesPerStream,
  };
}
