/**
 * Source comments cite the project's own guide (docs/), never section numbers of a specification a
 * reader of this repository does not have ("(05 §9)", "§4.9 of 08", "spec §"). What src/ says also
 * ends up in the shipped .d.ts files, so this covers them. Every docs/ reference must name a page that
 * exists and, when it names a section ("docs/concepts.md, Mandates"), a heading of that page or a
 * paragraph's bold title.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOTS = ['src', 'machines'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|js)$/.test(name) ? [full] : [];
  });
}

const files = ROOTS.flatMap(sourceFiles);

/** A public standard's section ("RFC 8785 §3.2") is something every reader can look up. */
const PUBLIC_STANDARD = /RFC \d{3,5} §[\d.]+/g;
const OUTSIDE = [
  /§/, // any other section sign: a protocol file's numbering
  /\b0[1-9]-[a-z-]+\.md\b/, // a protocol file by name
  /\bspec(?:ification)? §/i,
  /shared\/(?:protocol|spec|vectors)/,
  /\bARCHITECTURE\.md\b/, // the design notes outside the repository (docs/architecture.md is lowercase)
];

/** docs/configuration.md is generated from the RoomConfig descriptions, by a script of its own. */
const GENERATED = new Set(['docs/configuration.md']);

describe('citations in the source', () => {
  it('finds the source files', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('cites no section of a document outside the repository', () => {
    const offending: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const text = line.replace(PUBLIC_STANDARD, '');
          if (OUTSIDE.some((pattern) => pattern.test(text))) offending.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offending).toEqual([]);
  });

  it('names existing guide pages and headings', () => {
    const broken: string[] = [];
    const headings = new Map<string, string[]>();
    const headingsOf = (page: string) => {
      if (!headings.has(page)) {
        headings.set(
          page,
          [...readFileSync(page, 'utf8').matchAll(/^#+ (.*)$|\*\*([^*]+)\*\*/gm)].map((m) =>
            (m[1] ?? m[2]!).toLowerCase(),
          ),
        );
      }
      return headings.get(page)!;
    };
    for (const file of files) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\b(docs\/[a-z-]+\.md)(?:, ([A-Z][^.;:)\n]*))?/g)) {
        const [, page, section] = match;
        if (!existsSync(page!)) {
          if (!GENERATED.has(page!)) broken.push(`${file}: ${page} does not exist`);
          continue;
        }
        // A section name may itself hold a comma ("Seats, members and roles") or be followed by one.
        const names = section ? [section, section.split(',')[0]!].map((n) => n.trim().toLowerCase()) : [];
        if (section && !headingsOf(page!).some((h) => names.some((n) => h.includes(n)))) {
          broken.push(`${file}: ${page} has no heading "${section}"`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
