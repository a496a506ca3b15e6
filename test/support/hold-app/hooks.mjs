// The resolve hook of register.mjs: the app's module resolves once the file `until` exists.
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

let until;

export function initialize(data) {
  until = data?.until;
}

export async function resolve(specifier, context, nextResolve) {
  if (until && specifier.endsWith('/server-process.js')) {
    while (!existsSync(until)) await sleep(10);
    const resolved = await nextResolve(specifier, context);
    // Which module the entry loads (the bundle or the modules one by one), for the test to read.
    process.stderr.write(`hold-app: ${resolved.url}\n`);
    return resolved;
  }
  return nextResolve(specifier, context);
}
