/** The service's two state charts, read once from the machine definitions and drawn once. */
import { readFile } from 'node:fs/promises';
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
 * Both charts as SVG for a page, styled by the page's stylesheet, read once and kept. Laying a chart
 * out (ELK) takes the event loop for a second or more on a busy machine — long enough for the
 * back-pressure guard to refuse the requests behind it — so a request never does it: a built service
 * reads the drawings `npm run build` made (dist/public/charts/), and one run from the sources reads
 * the committed visualizations/ (kept current by a unit test) without their own <style>. Only when
 * neither is there are the charts laid out here.
 */
export function chartDrawings(): Promise<Record<keyof Charts, string>> {
  drawings ??= (async () => {
    const fromSources = import.meta.url.endsWith('.ts');
    const read = async (name: keyof Charts): Promise<string> => {
      const file = fromSources
        ? new URL(`../../visualizations/${name}.svg`, import.meta.url)
        : new URL(`../../public/charts/${name}.svg`, import.meta.url);
      const drawn = await readFile(file, 'utf8').catch(() => null);
      if (drawn !== null) return fromSources ? withoutOwnStyle(drawn) : drawn;
      return chartSvg(machineCharts()[name], { embedded: true });
    };
    return { room: await read('room'), decision: await read('decision') };
  })();
  return drawings;
}

/** A standalone drawing as a page embeds it: the same SVG without its own <style> line. */
export function withoutOwnStyle(svg: string): string {
  return svg.replace(/^<style>[^\n]*<\/style>\n/m, '');
}
