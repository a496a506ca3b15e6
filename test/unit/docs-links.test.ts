/**
 * The guide's links hold: every relative link in docs/*.md names a file of the repository and, with
 * a `#fragment`, a heading of that file (GitHub's anchor rules). The guide itself cites no section
 * numbers of documents outside the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const pages = readdirSync('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => path.join('docs', name));

/** GitHub's heading anchor: lowercase, punctuation dropped (but `-` and `_`), spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => anchor(m[1]!)));
}

/** docs/configuration.md is generated from the RoomConfig descriptions, by a script of its own. */
const GENERATED = new Set(['docs/configuration.md']);

describe('the guide in docs/', () => {
  it('has an index linking every page', () => {
    const index = readFileSync('docs/README.md', 'utf8');
    for (const page of pages) {
      if (page !== 'docs/README.md') expect(index, page).toContain(`](${path.basename(page)})`);
    }
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = match[1]!;
        if (/^[a-z]+:/.test(link)) continue;
        const [file, fragment] = link.split('#') as [string, string | undefined];
        const target = file === '' ? page : path.normalize(path.join('docs', file));
        if (!existsSync(target)) {
          if (!GENERATED.has(target)) broken.push(`${page}: ${link} (no such file)`);
          continue;
        }
        if (fragment !== undefined && !anchorsOf(target).has(fragment))
          broken.push(`${page}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only environment variables the service or the CLI reads', () => {
    const read = `${readFileSync('src/config.ts', 'utf8')}${readFileSync('src/cli/main.ts', 'utf8')}${readFileSync('src/cli/credentials.ts', 'utf8')}`;
    // Words in capitals that are not service variables: an HTTP method, a signal, a Dockerfile
    // instruction, Redis commands, the bench's case filter (bench/run.ts reads it), Node's own options.
    const notVariables = new Set([
      'NODE_OPTIONS',
      'POST',
      'SIGTERM',
      'HEALTHCHECK',
      'LASTSAVE',
      'SPUBLISH',
      'SSUBSCRIBE',
      'BENCH_ONLY',
    ]);
    const unknown: string[] = [];
    for (const page of pages.filter((p) => p !== 'docs/architecture.md')) {
      for (const match of readFileSync(page, 'utf8').matchAll(/`([A-Z][A-Z0-9_]{3,})(?:=[^`]*)?`/g)) {
        const name = match[1]!;
        if (!notVariables.has(name) && !new RegExp(`\\b${name}\\b`).test(read)) unknown.push(`${page}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('cites no section numbers of documents outside the repository', () => {
    for (const page of pages) expect(readFileSync(page, 'utf8'), page).not.toMatch(/§|\b0[1-9]-[a-z-]+\.md/);
  });
});
