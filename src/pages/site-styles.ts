/**
 * The rules of the person-facing pages (home, reference, guide, errors, the room as a place to take
 * part), appended to the pages' one stylesheet. Colours keep text at 4.5:1 or more on white; every
 * control shows its focus; nothing needs more than 360 px across (wide tables and code scroll in
 * their own frames).
 */
export const SITE_CSS = `
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem}
.skip:focus{left:.5rem;z-index:10}
nav.site{max-width:72rem;margin:0 auto;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.25rem 1rem;border-bottom:1px solid var(--line)}
nav.site a{font-weight:600}
.lead{font-size:1.1rem}
.stack{display:grid;gap:.4rem;max-width:40rem}
.stack label{font-weight:600}
.stack label.inline,label.inline{font-weight:400;display:flex;gap:.5rem;align-items:flex-start}
.stack button{justify-self:start;margin-top:.5rem}
fieldset{border:1px solid var(--line);border-radius:8px;display:grid;gap:.4rem;padding:.5rem .75rem .75rem}
legend{font-weight:700;padding:0 .25rem}
textarea,select{font:inherit;padding:.35rem .6rem;border:1px solid var(--muted);border-radius:6px;background:#fff;color:var(--ink);max-width:100%}
input,textarea,select{max-width:100%}
button:disabled{cursor:not-allowed;opacity:.7}
[role="alert"],.error{color:var(--bad);font-weight:600}
.error-page .code{font-family:ui-monospace,monospace}
.panel{border:1px solid var(--line);border-radius:8px;padding:.5rem 1rem 1rem;margin:1rem 0}
.panel>h2:first-child,.panel>h3:first-child{margin-top:.5rem}
.seat-line{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
.bars{list-style:none;padding:0;margin:.5rem 0;display:grid;gap:.35rem}
.bars li{display:grid;grid-template-columns:minmax(6rem,14rem) 1fr auto;gap:.5rem;align-items:center}
.bars progress{width:100%;height:1rem;accent-color:var(--accent)}
.bars .winner{font-weight:700}
.bars .count{font-variant-numeric:tabular-nums;white-space:nowrap}
@media (max-width:30rem){.bars li{grid-template-columns:1fr auto}.bars progress{grid-column:1/-1;grid-row:2}}
.rounds{padding-left:1.25rem}
.matrix th,.matrix td{text-align:center}
.ranking{list-style:none;padding:0;margin:.25rem 0;display:grid;gap:.35rem;max-width:32rem}
.ranking li{display:flex;align-items:center;gap:.5rem;border:1px solid var(--muted);border-radius:6px;padding:.3rem .5rem;background:#fff;cursor:grab}
.ranking li:focus-visible,.ranking li.dragging{background:#eef3fd}
.ranking .rank{font-weight:700;min-width:1.5rem}
.ranking .text{flex:1}
.ranking button{padding:.1rem .5rem}
.ballot-grid{display:grid;grid-template-columns:1fr auto;gap:.35rem .75rem;align-items:center;max-width:32rem}
.ballot-grid input{width:5rem}
.choices-list li,.discussion li{margin-bottom:.4rem}
.stance{display:inline-block;border:1px solid var(--muted);border-radius:4px;padding:0 .3rem;font-size:.85rem;color:var(--muted)}
.invite-link{width:100%;font-family:ui-monospace,monospace}
.countdown{font-weight:700}
.guide-layout{display:grid;gap:1rem;grid-template-columns:minmax(0,1fr)}
.guide-doc{min-width:0;max-width:50rem}
.guide-nav{order:2;font-size:.95rem;border-top:1px solid var(--line)}
@media (min-width:60rem){.guide-layout{grid-template-columns:15rem minmax(0,1fr)}.guide-nav{order:0;border-top:0}}
.guide-nav ul,.guide-toc ul{padding-left:1.1rem;margin:.25rem 0}
.guide-nav a[aria-current="page"]{font-weight:700;color:var(--ink)}
.guide-toc{border:1px solid var(--line);border-radius:8px;padding:.25rem 1rem;margin:1rem 0}
.guide-toc h2{margin-top:.5rem;font-size:1.05rem;border:0}
.guide-toc .toc-3{margin-left:1rem}
.guide-doc pre{overflow-x:auto;background:#f4f6f9;padding:.6rem;border-radius:6px}
.guide-doc pre code{word-break:normal;white-space:pre}
.table-frame{overflow-x:auto;max-width:100%}
.guide-pager{display:flex;flex-wrap:wrap;justify-content:space-between;gap:1rem;border-top:1px solid var(--line);margin-top:2rem;padding:1rem 0}
#create-room{grid-template-columns:minmax(0,1fr)}
#create-room select,#create-room textarea,#create-room input:not([type="checkbox"]):not([type="radio"]){width:100%}
#create-room fieldset{min-width:0}
#create-room p{margin:0}
.field-error{color:var(--bad);font-weight:600}
`;
