/**
 * Draws the state charts of machines/ as Mermaid state diagrams, straight from the machine
 * definitions (so the pictures cannot drift from the code). Run: npm run visualize.
 */
import { writeFile } from 'node:fs/promises';
import type { AnyStateMachine } from 'xstate';
import { decisionMachine } from '../machines/decision.machine.js';
import { roomMachine } from '../machines/room.machine.js';

interface Node {
  key: string;
  id: string;
  initial?: { target: { id: string }[] };
  states: Record<string, Node>;
  transitions: Map<string, { eventType: string; target?: { id: string }[]; guard?: unknown }[]>;
  always?: { target?: { id: string }[]; guard?: unknown }[];
  type: string;
}

const nameOf = (id: string) => id.replace(/[.#]/g, '_');
const guardOf = (guard: unknown) => {
  const name = typeof guard === 'string' ? guard : (guard as { type?: string } | undefined)?.type;
  return name ? ` [${name}]` : typeof guard === 'function' ? ' [inline guard]' : '';
};

function lines(node: Node, indent: string): string[] {
  const out: string[] = [];
  const children = Object.values(node.states);
  if (node.initial) for (const t of node.initial.target) out.push(`${indent}[*] --> ${nameOf(t.id)}`);
  for (const child of children) {
    if (Object.keys(child.states).length > 0) {
      out.push(`${indent}state ${nameOf(child.id)} {`);
      out.push(...lines(child, `${indent}  `));
      out.push(`${indent}}`);
    } else {
      out.push(`${indent}${nameOf(child.id)} : ${child.key}`);
    }
  }
  for (const child of children) {
    for (const [event, list] of child.transitions) {
      for (const t of list) {
        for (const target of t.target ?? []) {
          if (target.id === child.id) continue;
          const guard = guardOf(t.guard);
          out.push(`${indent}${nameOf(child.id)} --> ${nameOf(target.id)} : ${event}${guard}`);
        }
      }
    }
    for (const t of child.always ?? []) {
      for (const target of t.target ?? []) {
        const guard = guardOf(t.guard);
        out.push(`${indent}${nameOf(child.id)} --> ${nameOf(target.id)} : always${guard}`);
      }
    }
  }
  return out;
}

export function mermaid(machine: AnyStateMachine): string {
  const root = machine.root as unknown as Node;
  return ['stateDiagram-v2', ...lines(root, '  ')].join('\n') + '\n';
}

const charts = { room: roomMachine, decision: decisionMachine } as const;
for (const [name, machine] of Object.entries(charts)) {
  const text = mermaid(machine as AnyStateMachine);
  await writeFile(new URL(`./${name}.mmd`, import.meta.url), text);
  await writeFile(
    new URL(`./${name}.md`, import.meta.url),
    `# ${name} machine\n\nGenerated from \`machines/${name}.machine.ts\` by \`npm run visualize\`.\n\n\`\`\`mermaid\n${text}\`\`\`\n`,
  );
  console.log(`visualizations/${name}.mmd`);
}
