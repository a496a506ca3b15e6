/**
 * The room page's own rules (the seat's recovery link, the leave dialog, the host's seat list, field
 * errors), appended after the shared ones so they only add. Nothing needs more than 360 px across.
 */
export const ROOM_CSS = `
.warning{border-left:4px solid var(--now-line);background:#fff7dc;padding:.4rem .6rem;margin:.5rem 0}
#keep-seat summary{cursor:pointer;font-weight:600}
dialog{max-width:min(36rem,calc(100vw - 2rem));border:1px solid var(--muted);border-radius:8px}
dialog::backdrop{background:rgb(0 0 0 / 40%)}
#seats button{padding:.2rem .5rem}
.table-scroll{max-width:100%;overflow-x:auto}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
@media (max-width:40rem){#seats,#seats tbody,#seats tr,#seats th,#seats td{display:block}#seats thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}#seats tr{border:1px solid var(--line);border-radius:6px;padding:.4rem .6rem;margin:.4rem 0}#seats th,#seats td{border:0;padding:.1rem 0}#seats td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
`;
