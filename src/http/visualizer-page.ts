/**
 * GET /visualizer — the state-chart visualizer for developers: both charts drawn from the machine
 * definitions (src/visualizer/), a room's actors highlighted live, and a timeline to step back
 * through. The credential a private room needs is typed into the page and kept in its memory only;
 * `?room=<slug>` opens a room directly.
 */
import type { FastifyInstance } from 'fastify';
import { escapeHtml } from '../pages/room-render.js';
import { chartDrawings, machineCharts } from '../visualizer/charts.js';
import { type Chart, transitionLabel } from '../visualizer/chart-model.js';

/** The charts as text: every state with its nesting, every transition with event and guard. */
function chartText(chart: Chart): string {
  const states = chart.states
    .map(
      (s) =>
        `<li><code>${escapeHtml(s.id)}</code>${s.compound ? ' (compound)' : ''}${s.transient ? ' (transient)' : ''}</li>`,
    )
    .join('');
  const transitions = chart.transitions
    .map(
      (t) =>
        `<li><code>${escapeHtml(t.source)}</code> → <code>${escapeHtml(t.target)}</code> on ${escapeHtml(transitionLabel(t))}</li>`,
    )
    .join('');
  return `<h3>${escapeHtml(chart.id)} machine</h3><p>States:</p><ul>${states}</ul><p>Transitions:</p><ul>${transitions}</ul>`;
}

/**
 * A chart in a scrollable, focusable frame, drawn at its natural size so its labels stay readable on
 * a narrow screen; the page script adds zoom controls (src/pages/chart-zoom.ts).
 */
function frame(svg: string, name: string): string {
  return `<div class="chart-frame" tabindex="0" role="group" aria-label="${name}: scroll or drag to pan, + and − to zoom">${svg}</div>`;
}

export function registerVisualizerPage(app: FastifyInstance): void {
  app.get('/visualizer', async (_request, reply) => {
    const charts = machineCharts();
    const svgs = await chartDrawings();
    const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>Conclave state-chart visualizer</title>
<link rel="stylesheet" href="/assets/page.css"></head>
<body>
<header><h1>Conclave state-chart visualizer</h1>
<p class="muted">The room and decision machines, drawn from their definitions. Pick a room to see where its actors are, live, and step back through how they got there.</p></header>
<main>
<section aria-labelledby="pick-h"><h2 id="pick-h">Room</h2>
<div class="controls" id="room-picker">
<label>Room slug <input id="room-slug" name="room" autocomplete="off" spellcheck="false"></label>
<label>Token (kept in this page only) <input id="room-token" type="password" autocomplete="off"></label>
<label>Room password <input id="room-password" type="password" autocomplete="off"></label>
<button type="button" id="open-room">Open room</button>
</div>
<p id="status" role="status" aria-live="polite"></p>
</section>
<section aria-labelledby="charts-h"><h2 id="charts-h">Actors</h2>
<p id="mode" class="mode" aria-live="polite">No room selected: the charts below show the machines only.</p>
<p class="muted">On a small screen, pan a chart with a finger and zoom with two, or read <a href="#text-h">the charts as text</a>.</p>
<div class="charts">
<figure class="chart-box" id="room-chart"><figcaption>Room actor: <span id="room-state-text">–</span></figcaption>${frame(svgs.room, 'Room chart')}</figure>
<div class="decision-column">
<figure class="chart-box" id="decision-chart-idle"><figcaption>Decision actor (no room selected)</figcaption>${frame(svgs.decision, 'Decision chart')}</figure>
<div id="decision-charts" class="decision-column"></div>
</div>
</div>
<template id="decision-chart-template">${frame(svgs.decision, 'Decision chart')}</template>
</section>
<section aria-labelledby="timeline-h"><h2 id="timeline-h">Timeline</h2>
<p><button type="button" id="go-live" disabled>Back to live</button> <span class="muted">Select a step to see the charts as they were right after it.</span></p>
<ol id="timeline" class="timeline" aria-label="Machine steps, oldest first"></ol>
</section>
<section aria-labelledby="text-h"><h2 id="text-h">The charts as text</h2>
<details><summary>States and transitions of both machines</summary>${chartText(charts.room)}${chartText(charts.decision)}</details>
</section>
</main>
<script type="module" src="/assets/visualizer.js"></script>
</body>
</html>
`;
    return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
  });
}
