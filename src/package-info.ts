/**
 * The package's own name, version and licence, read once from package.json (found by walking up from
 * this module, so the same code works from src/ under tsx and from dist/src/ once built). The
 * OpenAPI document states these, so they cannot drift from what is published.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PackageInfo {
  name: string;
  version: string;
  license: string;
}

function findPackageJson(from: string): string {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    try {
      const parsed = JSON.parse(readFileSync(candidate, 'utf8')) as Partial<PackageInfo>;
      if (parsed.name === 'conclave') return candidate;
    } catch {
      // not here: keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json of conclave not found above ${from}`);
    dir = parent;
  }
}

let cached: PackageInfo | undefined;

export function packageInfo(): PackageInfo {
  if (cached) return cached;
  const file = findPackageJson(path.dirname(fileURLToPath(import.meta.url)));
  const { name, version, license } = JSON.parse(readFileSync(file, 'utf8')) as PackageInfo;
  cached = { name, version, license };
  return cached;
}
