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
  }
  return nextResolve(specifier, context);
}
