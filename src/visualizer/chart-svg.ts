/**
 * Draws a state chart as SVG: ELK (elkjs) lays out the nested states and routes the labelled
 * transitions; this module only turns ELK's coordinates into SVG elements. Every state is its own
 * `<g data-state="…">` whose text is the state's name alone (children are drawn beside their
 * parent's box, not inside its element), so a page can mark the active ones with
 * `data-current="true"` and read back exactly the state's name.
 */
import elkBundled from 'elkjs/lib/elk.bundled.js';
import type { ELK as ElkApi, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import { type Chart, type ChartState, transitionLabel } from './chart-model.js';

// elkjs is CommonJS: Node hands over module.exports (the constructor), a bundler may wrap it in default.
const ElkConstructor = ((elkBundled as unknown as { default?: unknown }).default ?? elkBundled) as new () => ElkApi;

const CHAR_WIDTH = 7;
const LABEL_HEIGHT = 14;
const TITLE_HEIGHT = 22;

const escapeXml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Standalone looks; a page restyles (and highlights) with more specific rules. A page's policy
 * allows no inline style, so pages draw without it and serve these rules in their stylesheet.
 */
export const CHART_STYLE = [
  '.chart .state rect{fill:#f4f6fb;stroke:#2b3a55;stroke-width:1.5}',
  '.chart .state.compound rect{fill:none}',
  '.chart .state.transient rect{stroke-dasharray:4 3}',
  '.chart text{font-family:system-ui,sans-serif;fill:#1b1f24}',
  '.chart .state-name{font-size:13px}',
  '.chart .transition{fill:none;stroke:#59606b;stroke-width:1.2}',
  '.chart .transition-label{font-size:11px;fill:#3b424c}',
  '.chart .initial,.chart .arrowhead{fill:#2b3a55}',
].join('');

const INITIAL = (parent: string | null) => `${parent ?? 'root'}#initial`;

function elkGraph(chart: Chart): ElkNode {
  const nodeOf = (state: ChartState): ElkNode => {
    const width = Math.max(70, state.name.length * CHAR_WIDTH + 24);
    if (!state.compound) return { id: state.id, width, height: 34 };
    return {
      id: state.id,
      layoutOptions: { 'elk.padding': `[top=${TITLE_HEIGHT + 12},left=12,bottom=12,right=12]` },
      children: childrenOf(state.id, state.initial),
    };
  };
  const childrenOf = (parent: string | null, initial: string | null): ElkNode[] => {
    const nodes = chart.states.filter((s) => s.parent === parent).map(nodeOf);
    return initial ? [{ id: INITIAL(parent), width: 12, height: 12 }, ...nodes] : nodes;
  };
  const edges: ElkExtendedEdge[] = chart.transitions.map((t) => {
    const text = transitionLabel(t);
    return {
      id: t.id,
      sources: [t.source],
      targets: [t.target],
      labels: [{ id: `${t.id}-label`, text, width: text.length * CHAR_WIDTH, height: LABEL_HEIGHT }],
    };
  });
  for (const state of [{ id: null, initial: chart.initial }, ...chart.states]) {
    if (state.initial) {
      edges.push({ id: `${INITIAL(state.id)}-edge`, sources: [INITIAL(state.id)], targets: [state.initial] });
    }
  }
  return {
    id: chart.id,
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '40',
      'elk.spacing.nodeNode': '30',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.inline': 'false',
      'elk.padding': '[top=16,left=16,bottom=16,right=16]',
      // Edge points relative to the root, whatever state the edge crosses into.
      'elk.json.edgeCoords': 'ROOT',
    },
    children: childrenOf(null, chart.initial),
    edges,
  };
}

interface Placed {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Absolute positions of every node (ELK gives each relative to its parent). */
function placeNodes(node: ElkNode, dx: number, dy: number, out: Map<string, Placed>): void {
  for (const child of node.children ?? []) {
    const x = dx + (child.x ?? 0);
    const y = dy + (child.y ?? 0);
    out.set(child.id, { x, y, width: child.width ?? 0, height: child.height ?? 0 });
    placeNodes(child, x, y, out);
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

/** `embedded`: for a page, which styles the chart from its own stylesheet (no `<style>` element). */
export async function chartSvg(chart: Chart, options: { embedded?: boolean } = {}): Promise<string> {
  const layout = await new ElkConstructor().layout(elkGraph(chart));
  const placed = new Map<string, Placed>();
  placeNodes(layout, 0, 0, placed);
  const width = round(layout.width ?? 0);
  const height = round(layout.height ?? 0);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="${escapeXml(chart.id)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-labelledby="${escapeXml(chart.id)}-chart-title">`,
    `<title id="${escapeXml(chart.id)}-chart-title">State chart of the ${escapeXml(chart.id)} machine</title>`,
    ...(options.embedded ? [] : [`<style>${CHART_STYLE}</style>`]),
    '<defs><marker id="arrow-' +
      escapeXml(chart.id) +
      '" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>',
  ];
  // Outer states first so their boxes lie under their children.
  const depth = (state: ChartState): number =>
    state.parent ? 1 + depth(chart.states.find((s) => s.id === state.parent)!) : 0;
  for (const state of [...chart.states].sort((a, b) => depth(a) - depth(b))) {
    const box = placed.get(state.id)!;
    const label = state.compound
      ? `<text x="${round(box.x + 10)}" y="${round(box.y + 17)}" class="state-name">${escapeXml(state.name)}</text>`
      : `<text x="${round(box.x + box.width / 2)}" y="${round(box.y + box.height / 2 + 4)}" text-anchor="middle" class="state-name">${escapeXml(state.name)}</text>`;
    out.push(
      `<g class="state${state.compound ? ' compound' : ''}${state.transient ? ' transient' : ''}" data-state="${escapeXml(state.id)}" data-state-name="${escapeXml(state.name)}">` +
        `<rect x="${round(box.x)}" y="${round(box.y)}" width="${round(box.width)}" height="${round(box.height)}" rx="8"/>${label}</g>`,
    );
  }
  for (const [id, box] of placed) {
    if (!id.endsWith('#initial')) continue;
    out.push(
      `<circle class="initial" cx="${round(box.x + box.width / 2)}" cy="${round(box.y + box.height / 2)}" r="6"><title>initial state</title></circle>`,
    );
  }
  const edges = collectEdges(layout);
  for (const { edge, dx, dy } of edges) {
    const transition = chart.transitions.find((t) => t.id === edge.id);
    for (const section of edge.sections ?? []) {
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${round(p.x + dx)},${round(p.y + dy)}`).join(' ');
      out.push(
        `<path class="transition" data-transition="${escapeXml(edge.id)}" d="${d}" marker-end="url(#arrow-${escapeXml(chart.id)})"/>`,
      );
    }
    for (const label of edge.labels ?? []) {
      if (!transition) continue;
      out.push(
        `<text class="transition-label" x="${round((label.x ?? 0) + dx)}" y="${round((label.y ?? 0) + dy + 11)}">${escapeXml(label.text ?? '')}</text>`,
      );
    }
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Every edge, wherever ELK placed it; with edgeCoords ROOT its points are absolute. */
function collectEdges(node: ElkNode): { edge: ElkExtendedEdge; dx: number; dy: number }[] {
  const found = (node.edges ?? []).map((edge) => ({ edge, dx: 0, dy: 0 }));
  for (const child of node.children ?? []) found.push(...collectEdges(child));
  return found;
}
