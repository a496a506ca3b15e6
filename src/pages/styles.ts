import { CHART_STYLE } from '../visualizer/chart-svg.js';
import { ROOM_CSS } from './room-styles.js';
import { SITE_CSS } from './site-styles.js';

/**
 * The pages' one stylesheet, served as /assets/page.css: the pages' policy runs no inline style
 * (src/http/page-security.ts). The charts' standalone looks come first; the page's rules restyle them.
 */
export const PAGE_CSS = `${CHART_STYLE}
:root{color-scheme:light;--ink:#1b1f24;--muted:#4a525d;--line:#c9d1dc;--accent:#0b57d0;--ok:#0a6b2d;--bad:#a3141c;--now:#ffe08a;--now-line:#8a5a00}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:#fff}
header,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}
header{padding-top:1rem}
h1{font-size:1.6rem;line-height:1.25;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;overflow-wrap:anywhere}
p,li{overflow-wrap:anywhere}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
code{font-size:.85em;word-break:break-all}
.brief,.muted{color:var(--muted)}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid var(--line);padding:.25rem .6rem;text-align:left}
[data-receipt-verified="true"]{color:var(--ok);font-weight:600}
[data-receipt-verified="false"]{color:var(--bad);font-weight:600}
[data-log-verified="true"]{color:var(--ok)}
[data-log-verified="false"]{color:var(--bad);font-weight:600}
.log-inclusion{display:block}
.signed-values{display:block}
[data-fields-match="false"],[data-room-match="false"]{color:var(--bad);font-weight:600}
.controls{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end}
.controls label{display:flex;flex-direction:column;font-size:.9rem}
input,button{font:inherit;padding:.35rem .6rem;border:1px solid var(--muted);border-radius:6px;background:#fff;color:var(--ink)}
button{cursor:pointer;background:#eef3fd}
.charts{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem;align-items:start}
@media (min-width:60rem){.charts{grid-template-columns:minmax(0,2fr) minmax(0,3fr)}}
.decision-column{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}
.chart-box{border:1px solid var(--line);border-radius:8px;padding:.5rem;margin:0;min-width:0}
.chart-frame{overflow:auto;max-height:75vh;max-width:100%}
.chart-frame svg{display:block;max-width:none}
.chart-frame[data-zoom]{cursor:grab}
.chart-frame.dragging{cursor:grabbing}
.chart-zoom{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:.25rem 0}
.chart-zoom button{min-width:2.75rem;min-height:2.75rem}
.chart .state[data-current="true"] rect{fill:var(--now);stroke:var(--now-line);stroke-width:3}
.chart .state.compound[data-current="true"] rect{fill:#fff7dc}
.chart .state[data-current="true"] .state-name{font-weight:700}
.timeline{list-style:none;padding:0;max-height:28rem;overflow:auto;border:1px solid var(--line);border-radius:8px}
.timeline li{border-bottom:1px solid var(--line)}
.timeline button{width:100%;text-align:left;border:0;border-radius:0;background:#fff;padding:.4rem .6rem}
.timeline button[aria-pressed="true"]{background:var(--now)}
.mode{font-weight:600}
.decided-list{list-style:none;padding:0}
.decided-list>li{border-top:1px solid var(--line);padding-top:.25rem}
.device-page{max-width:40rem;margin:2rem auto;padding:0 1rem}
.device-page th{text-align:left;padding-right:1rem;vertical-align:top}
.device-page code{font-size:1.1em}
.device-page button{margin-right:.5rem}
.device-page #result{margin-top:1rem;font-weight:bold}
${SITE_CSS}${ROOM_CSS}`;
