/** The service's two state charts, read once from the machine definitions and drawn once. */
import type { AnyStateMachine } from 'xstate';
import { decisionMachine } from '../../machines/decision.machine.js';
import { roomMachine } from '../../machines/room.machine.js';
import { type Chart, chartOf } from './chart-model.js';
import { chartSvg } from './chart-svg.js';

export interface Charts {
  room: Chart;
  decision: Chart;
}

let charts: Charts | undefined;
let drawings: Promise<Record<keyof Charts, string>> | undefined;

export function machineCharts(): Charts {
  charts ??= {
    room: chartOf(roomMachine as AnyStateMachine),
    decision: chartOf(decisionMachine as AnyStateMachine),
  };
  return charts;
}

/**
 * Both charts as SVG for a page, styled by the page's stylesheet (ELK layout is asynchronous; the
 * drawings are made on first use and kept).
 */
export function chartDrawings(): Promise<Record<keyof Charts, string>> {
  drawings ??= (async () => {
    const { room, decision } = machineCharts();
    return { room: await chartSvg(room, { embedded: true }), decision: await chartSvg(decision, { embedded: true }) };
  })();
  return drawings;
}
