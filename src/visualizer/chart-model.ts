/**
 * A state chart read straight from an XState machine definition: its state nodes (with nesting and
 * initial children) and its transitions labelled with event and guard. Both the drawings
 * (Mermaid, SVG) and the live highlighting use this one model, so no picture can drift from the code.
 */
import type { AnyStateMachine } from 'xstate';

export interface ChartState {
  /** The XState node id, e.g. `decision.voting.settling`. */
  id: string;
  /** The state's own name, e.g. `settling`. */
  name: string;
  /** The enclosing state's id; null for the machine's top-level states. */
  parent: string | null;
  /** Has child states. */
  compound: boolean;
  /** The initial child of this compound state. */
  initial: string | null;
  /** Left at once through an eventless (`always`) transition, so never observed at rest. */
  transient: boolean;
}

export interface ChartTransition {
  id: string;
  source: string;
  target: string;
  /** The event type, or `always` for an eventless transition. */
  event: string;
  /** The guard's name; `inline guard` for an anonymous one; null when unguarded. */
  guard: string | null;
}

export interface Chart {
  /** The machine id (`room`, `decision`). */
  id: string;
  initial: string;
  states: ChartState[];
  transitions: ChartTransition[];
}

interface XNode {
  key: string;
  id: string;
  initial?: { target: { id: string }[] };
  states: Record<string, XNode>;
  transitions: Map<string, { eventType: string; target?: { id: string }[]; guard?: unknown }[]>;
  always?: { target?: { id: string }[]; guard?: unknown }[];
}

function guardName(guard: unknown): string | null {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return 'inline guard';
  const type = (guard as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' ? type : null;
}

export function chartOf(machine: AnyStateMachine): Chart {
  const root = machine.root as unknown as XNode;
  const states: ChartState[] = [];
  const transitions: ChartTransition[] = [];
  const visit = (node: XNode, parent: string | null) => {
    for (const child of Object.values(node.states)) {
      const always = child.always ?? [];
      states.push({
        id: child.id,
        name: child.key,
        parent,
        compound: Object.keys(child.states).length > 0,
        initial: child.initial?.target[0]?.id ?? null,
        // A state whose last eventless transition is unguarded can never be at rest.
        transient: always.length > 0 && always.at(-1)?.guard === undefined,
      });
      for (const [event, list] of child.transitions) {
        for (const t of list) {
          for (const target of t.target ?? []) {
            if (target.id === child.id) continue;
            transitions.push({ id: '', source: child.id, target: target.id, event, guard: guardName(t.guard) });
          }
        }
      }
      for (const t of always) {
        for (const target of t.target ?? []) {
          transitions.push({ id: '', source: child.id, target: target.id, event: 'always', guard: guardName(t.guard) });
        }
      }
      visit(child, child.id);
    }
  };
  visit(root, null);
  transitions.forEach((t, i) => {
    t.id = `${root.id}-t${i}`;
  });
  return { id: root.id, initial: root.initial?.target[0]?.id ?? states[0]!.id, states, transitions };
}

/** The ids of a state and all its ancestors: what is active when the machine rests in `id`. */
export function activeIds(chart: Chart, id: string): string[] {
  const byId = new Map(chart.states.map((s) => [s.id, s]));
  const out: string[] = [];
  for (let state = byId.get(id); state; state = state.parent ? byId.get(state.parent) : undefined)
    out.unshift(state.id);
  return out;
}

export function transitionLabel(t: ChartTransition): string {
  return t.guard ? `${t.event} [${t.guard}]` : t.event;
}

/** The chart as a Mermaid state diagram. */
export function mermaidOf(chart: Chart): string {
  const name = (id: string) => id.replace(/[.#]/g, '_');
  const lines = (parent: string | null, indent: string, initial: string | null): string[] => {
    const out: string[] = [];
    if (initial) out.push(`${indent}[*] --> ${name(initial)}`);
    const children = chart.states.filter((s) => s.parent === parent);
    for (const child of children) {
      if (child.compound) {
        out.push(`${indent}state ${name(child.id)} {`, ...lines(child.id, `${indent}  `, child.initial), `${indent}}`);
      } else {
        out.push(`${indent}${name(child.id)} : ${child.name}`);
      }
    }
    for (const child of children) {
      for (const t of chart.transitions.filter((x) => x.source === child.id)) {
        out.push(`${indent}${name(t.source)} --> ${name(t.target)} : ${transitionLabel(t)}`);
      }
    }
    return out;
  };
  return `${['stateDiagram-v2', ...lines(null, '  ', chart.initial)].join('\n')}\n`;
}
