/**
 * `/guide`: the repository's docs/ folder as pages a person reads (docs/architecture.md, Pages). Each
 * document is rendered from Markdown to HTML by `marked` on the server — no script runs on the page,
 * so the pages' strict policy holds — with a table of contents of its sections and links to every
 * other document and to the previous and next one. Raw HTML in a document is shown as text, never
 * passed through. A program that asks without ranking text/html first still gets the Markdown as it
 * ships (`/guide/{file}`).
 */
import { readdir, readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Marked, type Tokens } from 'marked';
import { ProtocolError } from '../errors.js';
import { escapeHtml } from '../pages/room-render.js';
import { HTML_TYPE, pageShell } from '../pages/shell.js';
import { prefersHtml } from './negotiate.js';

const GUIDE_FILE = /^[a-z0-9][a-z0-9._-]*\.md$/;
const GUIDE_DIR = new URL(import.meta.url.endsWith('.ts') ? '../../docs/' : '../../../docs/', import.meta.url);
/** docs/README.md is the guide's front page: its table says what each document is for. */
const FRONT = 'README.md';

/**
 * The documents that ship, in reading order: the order docs/README.md links them (concepts before
 * architecture), then any it does not link, by name.
 */
export async function guideFiles(): Promise<string[]> {
  let files: string[];
  try {
    files = (await readdir(GUIDE_DIR)).filter((f) => GUIDE_FILE.test(f)).sort();
  } catch {
    return [];
  }
  const front = (await readDoc(FRONT)) ?? '';
  const linked = [...front.matchAll(/\]\(([a-z0-9][a-z0-9._-]*\.md)\)/g)].map(([, f]) => f ?? '');
  const ordered = [...new Set(linked)].filter((f) => files.includes(f));
  return [...ordered, ...files.filter((f) => !ordered.includes(f))];
}

async function readDoc(file: string): Promise<string | null> {
  try {
    return await readFile(new URL(file, GUIDE_DIR), 'utf8');
  } catch {
    return null;
  }
}

/** The anchor a heading gets: lower case, punctuation dropped, spaces as hyphens (the links in docs/ use this form). */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Where a link written inside docs/ points once the documents are served under /guide/. */
function guideHref(href: string): string | null {
  if (/^(?:https?:|mailto:|#)/.test(href)) return href;
  const [path = '', fragment] = href.split('#', 2);
  const hash = fragment === undefined ? '' : `#${fragment}`;
  if (path === FRONT || path === `./${FRONT}`) return `/guide${hash}`;
  const name = path.replace(/^\.\//, '');
  if (GUIDE_FILE.test(name)) return `/guide/${name}${hash}`;
  // Anything outside docs/ (the repository's README, source files) is not served here.
  return null;
}

interface Rendered {
  title: string;
  html: string;
  toc: { depth: number; id: string; text: string }[];
}

function render(markdown: string): Rendered {
  const toc: Rendered['toc'] = [];
  const seen = new Map<string, number>();
  let title = '';
  const marked = new Marked({ gfm: true, async: false });
  marked.use({
    renderer: {
      heading(token: Tokens.Heading): string {
        const inner = this.parser.parseInline(token.tokens);
        const plain = token.text.replace(/`/g, '');
        const base = headingId(plain);
        const count = seen.get(base) ?? 0;
        seen.set(base, count + 1);
        const id = count === 0 ? base : `${base}-${count}`;
        if (token.depth === 1 && !title) title = plain;
        if (token.depth === 2 || token.depth === 3) toc.push({ depth: token.depth, id, text: plain });
        return `<h${token.depth} id="${escapeHtml(id)}">${inner}</h${token.depth}>\n`;
      },
      link(token: Tokens.Link): string {
        const inner = this.parser.parseInline(token.tokens);
        const href = guideHref(token.href);
        return href === null ? inner : `<a href="${escapeHtml(href)}">${inner}</a>`;
      },
      html(token: Tokens.HTML | Tokens.Tag): string {
        // Comments (the generated-file notice) are for editors; any other raw HTML shows as text.
        return /^\s*<!--[\s\S]*-->\s*$/.test(token.text) ? '' : escapeHtml(token.text);
      },
    },
    hooks: {
      // A wide table or code block scrolls inside its own frame, so the page keeps the phone's width;
      // the frame takes focus so the keyboard can scroll it too.
      postprocess: (html: string) =>
        html
          .replace(/<pre>/g, '<pre tabindex="0">')
          .replace(/<table>/g, '<div class="table-frame" tabindex="0" role="region" aria-label="Table"><table>')
          .replace(/<\/table>/g, '</table></div>'),
    },
  });
  const html = marked.parse(markdown, { async: false });
  return { title, html, toc };
}

function navigation(files: readonly string[], titles: Map<string, string>, current: string | null): string {
  const items = files
    .map((f) => {
      const label = escapeHtml(titles.get(f) ?? f);
      return f === current
        ? `<li><a href="/guide/${f}" aria-current="page">${label}</a></li>`
        : `<li><a href="/guide/${f}">${label}</a></li>`;
    })
    .join('');
  const front = current === null ? ' aria-current="page"' : '';
  return `<nav class="guide-nav" aria-label="Guide documents"><p><a href="/guide"${front}>Guide home</a></p><ul>${items}</ul></nav>`;
}

function contents(toc: Rendered['toc']): string {
  if (toc.length < 2) return '';
  const items = toc
    .map((h) => `<li class="toc-${h.depth}"><a href="#${escapeHtml(h.id)}">${escapeHtml(h.text)}</a></li>`)
    .join('');
  return `<nav class="guide-toc" aria-label="On this page"><h2>On this page</h2><ul>${items}</ul></nav>`;
}

function neighbours(files: readonly string[], titles: Map<string, string>, current: string): string {
  const at = files.indexOf(current);
  const prev = at > 0 ? files[at - 1] : undefined;
  const next = at >= 0 && at < files.length - 1 ? files[at + 1] : undefined;
  const link = (f: string | undefined, rel: string, words: string) =>
    f ? `<a rel="${rel}" href="/guide/${f}">${words}: ${escapeHtml(titles.get(f) ?? f)}</a>` : '';
  return `<nav class="guide-pager" aria-label="Previous and next document">${link(prev, 'prev', 'Previous')}${link(next, 'next', 'Next')}</nav>`;
}

/** Each document's first heading, for the navigation (the file name when it has none). */
async function titlesOf(files: readonly string[]): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  for (const f of files) {
    const first = /^# (.+)$/m.exec((await readDoc(f)) ?? '')?.[1];
    titles.set(f, first ? first.replace(/`/g, '') : f);
  }
  return titles;
}

function sendPage(reply: FastifyReply, title: string, body: string): FastifyReply {
  return reply
    .header('content-type', HTML_TYPE)
    .header('cache-control', 'no-store')
    .header('vary', 'accept')
    .send(pageShell({ title: `${title} · Guide`, body }));
}

/** The table of contents goes just below the document's title (or first, when it has none). */
function afterTitle(html: string, toc: string): string {
  const end = html.indexOf('</h1>');
  return end < 0 ? `${toc}${html}` : `${html.slice(0, end + 5)}${toc}${html.slice(end + 5)}`;
}

function guideBody(nav: string, doc: Rendered, after: string): string {
  return `<main id="main" class="guide">
<div class="guide-layout">${nav}
<article class="guide-doc">${afterTitle(doc.html, contents(doc.toc))}${after}</article>
</div></main>`;
}

export function registerGuidePages(app: FastifyInstance): void {
  app.get('/guide', async (_request, reply) => {
    const files = await guideFiles();
    if (files.length === 0) {
      const body = `<main id="main"><h1>Guide</h1><p>This installation ships without the docs/ folder; read it in the source repository.</p></main>`;
      return sendPage(reply, 'Guide', body);
    }
    const titles = await titlesOf(files);
    const front = await readDoc(FRONT);
    const doc: Rendered = front ? render(front) : { title: 'Guide', html: '<h1>Guide</h1>', toc: [] };
    return sendPage(reply, doc.title || 'Guide', guideBody(navigation(files, titles, null), doc, ''));
  });
  app.get('/guide/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    const files = await guideFiles();
    const text = files.includes(file) ? await readDoc(file) : null;
    if (text === null) {
      throw new ProtocolError({
        code: 'vendor:conclave:not_found',
        message: `There is no guide document ${file}. The guide lists its documents at /guide.`,
        details: { path: `/guide/${file}` },
      });
    }
    reply.header('vary', 'accept');
    if (!prefersHtml(request.headers.accept)) {
      return reply
        .header('content-type', 'text/markdown; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(text);
    }
    const doc = render(text);
    const titles = await titlesOf(files);
    return sendPage(
      reply,
      doc.title || file,
      guideBody(navigation(files, titles, file), doc, neighbours(files, titles, file)),
    );
  });
}
