/**
 * Bundles the pages' browser scripts with esbuild: `npm run build` writes them to dist/public/, and a
 * service run from the TypeScript sources (tests, `npm run dev`) bundles them once at start-up, so
 * what a browser runs is always today's code. esbuild is a build tool: it is loaded only here.
 */
import { fileURLToPath } from 'node:url';

export const PAGE_SCRIPTS = ['visualizer', 'room', 'device', 'home', 'docs'] as const;
export type PageScript = (typeof PAGE_SCRIPTS)[number];

export async function bundlePages(): Promise<Record<PageScript, string>> {
  const { build } = await import('esbuild');
  const out = {} as Record<PageScript, string>;
  for (const name of PAGE_SCRIPTS) {
    const result = await build({
      entryPoints: [fileURLToPath(new URL(`./${name}-page.ts`, import.meta.url))],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      minify: true,
      write: false,
      logLevel: 'silent',
    });
    out[name] = result.outputFiles[0]!.text;
  }
  return out;
}
