/**
 * Zoom and pan for a state chart drawn as SVG inside a scrollable frame (`.chart-frame`), so that a
 * chart wider than the screen stays readable on a phone: it opens at its natural size (labels at
 * their stylesheet size, 11 px and up) and the reader moves around it instead of squinting at a
 * shrunken copy. Panning is the frame's own scrolling — one finger, the scrollbars, or dragging
 * with a mouse; zooming is the toolbar's buttons, two fingers, Ctrl + wheel, or the keyboard on the
 * focused frame (+, −, 0 for actual size, arrows to pan). Without scripts the frame still scrolls.
 */

/** Zoom limits relative to the natural size; below 1 the labels shrink, so 1 is where charts open. */
const MAX_SCALE = 4;
const MIN_SCALE = 0.2;
const STEP = 1.25;
const KEY_PAN_PX = 48;

export interface ChartZoom {
  readonly scale: number;
  zoomTo(scale: number, focus?: { x: number; y: number }): void;
  /** Scrolls the frame so that `element` (a part of the chart) is in the middle of it. */
  reveal(element: Element): void;
}

/** Attaches the controls to `box` (a figure holding `.chart-frame > svg`); returns null when there is no chart. */
export function enableChartZoom(box: HTMLElement): ChartZoom | null {
  const frame = box.querySelector<HTMLElement>('.chart-frame');
  const svg = frame?.querySelector<SVGSVGElement>('svg');
  if (!frame || !svg || frame.dataset.zoom !== undefined) return null;
  const viewBox = svg.viewBox.baseVal;
  const natural = { width: viewBox.width, height: viewBox.height };
  let scale = 1;

  const label = document.createElement('span');
  label.className = 'zoom-level';
  label.setAttribute('aria-live', 'polite');
  const toolbar = document.createElement('div');
  toolbar.className = 'chart-zoom';
  toolbar.setAttribute('role', 'toolbar');
  toolbar.setAttribute('aria-label', 'Zoom the chart');
  const button = (text: string, name: string, action: () => void) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.setAttribute('aria-label', name);
    b.dataset.zoomAction = name;
    b.addEventListener('click', action);
    return b;
  };
  toolbar.append(
    button('−', 'Zoom out', () => zoomTo(scale / STEP)),
    button('+', 'Zoom in', () => zoomTo(scale * STEP)),
    button('Fit', 'Fit to width', () => zoomTo(fitScale())),
    button('Reset', 'Reset zoom to actual size', () => zoomTo(1)),
    label,
  );
  frame.before(toolbar);
  frame.dataset.zoom = '1';
  if (!frame.hasAttribute('tabindex')) frame.tabIndex = 0;

  function fitScale(): number {
    return clamp(frame!.clientWidth / natural.width);
  }

  /** Sets the scale, keeping the chart point under `focus` (frame coordinates) where it was. */
  function zoomTo(next: number, focus = { x: frame!.clientWidth / 2, y: frame!.clientHeight / 2 }): void {
    const target = clamp(next);
    const ratio = target / scale;
    const anchorX = frame!.scrollLeft + focus.x;
    const anchorY = frame!.scrollTop + focus.y;
    scale = target;
    // Attributes, not inline style: the pages' policy allows no style attribute.
    svg!.setAttribute('width', String(Math.round(natural.width * scale)));
    svg!.setAttribute('height', String(Math.round(natural.height * scale)));
    frame!.scrollLeft = anchorX * ratio - focus.x;
    frame!.scrollTop = anchorY * ratio - focus.y;
    frame!.dataset.zoom = String(Math.round(scale * 100) / 100);
    label.textContent = `${Math.round(scale * 100)}%`;
  }

  // Mouse: drag to pan (touch pans natively, by scrolling the frame).
  let drag: { x: number; y: number; left: number; top: number; id: number } | null = null;
  frame.addEventListener('pointerdown', (event) => {
    if (event.pointerType !== 'mouse' || event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: frame.scrollLeft, top: frame.scrollTop, id: event.pointerId };
    frame.setPointerCapture(event.pointerId);
    frame.classList.add('dragging');
  });
  frame.addEventListener('pointermove', (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    frame.scrollLeft = drag.left - (event.clientX - drag.x);
    frame.scrollTop = drag.top - (event.clientY - drag.y);
  });
  const endDrag = () => {
    drag = null;
    frame.classList.remove('dragging');
  };
  frame.addEventListener('pointerup', endDrag);
  frame.addEventListener('pointercancel', endDrag);

  // Two fingers: pinch to zoom around their midpoint.
  let pinch: { distance: number; scale: number } | null = null;
  const spread = (touches: TouchList) => {
    const [a, b] = [touches[0]!, touches[1]!];
    const box = frame.getBoundingClientRect();
    return {
      distance: Math.hypot(a.clientX - b.clientX, a.clientY - b.clientY),
      focus: { x: (a.clientX + b.clientX) / 2 - box.left, y: (a.clientY + b.clientY) / 2 - box.top },
    };
  };
  frame.addEventListener(
    'touchstart',
    (event) => {
      if (event.touches.length === 2) pinch = { distance: spread(event.touches).distance, scale };
    },
    { passive: true },
  );
  frame.addEventListener(
    'touchmove',
    (event) => {
      if (!pinch || event.touches.length !== 2) return;
      event.preventDefault();
      const now = spread(event.touches);
      if (pinch.distance > 0) zoomTo((pinch.scale * now.distance) / pinch.distance, now.focus);
    },
    { passive: false },
  );
  frame.addEventListener('touchend', (event) => {
    if (event.touches.length < 2) pinch = null;
  });

  // Ctrl + wheel (and a trackpad's pinch, which browsers report as one) zooms at the pointer.
  frame.addEventListener(
    'wheel',
    (event) => {
      if (!event.ctrlKey) return;
      event.preventDefault();
      const box = frame.getBoundingClientRect();
      zoomTo(scale * (event.deltaY < 0 ? STEP : 1 / STEP), {
        x: event.clientX - box.left,
        y: event.clientY - box.top,
      });
    },
    { passive: false },
  );

  frame.addEventListener('keydown', (event) => {
    const pan: Record<string, [number, number]> = {
      ArrowLeft: [-KEY_PAN_PX, 0],
      ArrowRight: [KEY_PAN_PX, 0],
      ArrowUp: [0, -KEY_PAN_PX],
      ArrowDown: [0, KEY_PAN_PX],
    };
    const move = pan[event.key];
    if (move) {
      frame.scrollLeft += move[0];
      frame.scrollTop += move[1];
    } else if (event.key === '+' || event.key === '=') zoomTo(scale * STEP);
    else if (event.key === '-' || event.key === '_') zoomTo(scale / STEP);
    else if (event.key === '0') zoomTo(1);
    else return;
    event.preventDefault();
  });

  function reveal(element: Element): void {
    const target = element.getBoundingClientRect();
    const box = frame!.getBoundingClientRect();
    frame!.scrollLeft += target.left + target.width / 2 - (box.left + frame!.clientWidth / 2);
    frame!.scrollTop += target.top + target.height / 2 - (box.top + frame!.clientHeight / 2);
  }

  zoomTo(1);
  return {
    get scale() {
      return scale;
    },
    zoomTo,
    reveal,
  };
}

function clamp(scale: number): number {
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale));
}
