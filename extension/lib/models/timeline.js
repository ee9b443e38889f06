// Layout of the timeline chart of one start: pure geometry, no DOM (page/timeline.js draws it).
// Milestones sit on a horizontal time axis (ms since `process`); each has a label, and labels
// that would overlap are moved to further lanes above the axis.

/** A step of 1, 2 or 5 × 10^k such that `span` needs at most `maxTicks` steps. */
export function niceStep(span, maxTicks = 8) {
  if (!(span > 0) || !Number.isFinite(span)) {
    return 1;
  }
  const raw = span / Math.max(1, maxTicks);
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const factor of [1, 2, 5, 10]) {
    if (factor * power >= raw) {
      return factor * power;
    }
  }
  return 10 * power;
}

/** Tick values from 0 to at least `max`, every `step`. The last tick is ≥ max, so the axis ends on a tick. */
export function tickValues(max, maxTicks = 8) {
  const step = niceStep(max, maxTicks);
  const end = max > 0 ? Math.ceil(max / step - 1e-9) * step : step;
  const values = [];
  for (let i = 0; i * step <= end + step * 1e-9; i++) {
    values.push(Number((i * step).toPrecision(12)));
  }
  return values;
}

export const DEFAULTS = Object.freeze({
  width: 720,
  marginLeft: 12,
  marginRight: 12,
  marginTop: 6,
  laneHeight: 18, // one line of labels
  charWidth: 7.2, // estimated width of one label character (px) at the chart's font size
  labelGap: 10, // least space between two labels in a lane
  labelPad: 5, // space between a mark's line and its label
  axisGap: 10, // space between the lowest lane and the axis
  tickLabelHeight: 26, // below the axis: tick marks and their numbers
  maxTicks: 8,
});

/** The milestone that ends a start: its time axes stop there (plus the trace's last read). */
export const START_END = "sessionRestored";

/**
 * Where the time axes of one start end (ms since the process began): at sessionRestored, or
 * at `lastRead` (a trace's last read) if that is later, so the start fills the chart. Without
 * sessionRestored (basic mode, or not yet reported) the last milestone or `lastRead`, whichever
 * is later. Milestones after the end (startupCrashDetectionEnd ~30 s after the start, once a page
 * is opened late) are listed at the chart's edge, not drawn on an axis they would stretch tenfold.
 * `milestones`: [{name, value}] with value in ms; null when there is nothing to span.
 */
export function startSpanEnd(milestones, { lastRead = null } = {}) {
  const usable = (milestones ?? []).filter((m) => typeof m?.value === "number" && Number.isFinite(m.value) && m.value >= 0);
  const end = usable.find((m) => m.name === START_END)?.value ?? null;
  const read = typeof lastRead === "number" && Number.isFinite(lastRead) && lastRead > 0 ? lastRead : null;
  if (end !== null) {
    return Math.max(end, read ?? 0);
  }
  const last = usable.length > 0 ? Math.max(...usable.map((m) => m.value)) : null;
  return last === null && read === null ? null : Math.max(last ?? 0, read ?? 0);
}

/**
 * Lays out `items` ({name, value, label?}: value = ms since origin). `options` overrides DEFAULTS;
 * `options.measure(label)` gives a label's width in px (the page measures the real text), else
 * it is estimated from `charWidth`. Items without a finite value
 * ≥ 0 are left out: a missing milestone is absent from the chart, never drawn at 0.
 * `options.spanEnd` (startSpanEnd's): the axis ends there; items after it are not on the axis but
 * in `later` ({name, value, label}, in time order), for the chart to list at its right edge.
 * Returns {width, height, axisY, left, right, max, ticks:[{value, x}], lanes, later,
 *          marks:[{name, value, label, x, lane, labelX, labelY, anchor, labelWidth, textX0, textX1}]}.
 */
export function timelineLayout(items, options = {}) {
  const o = { ...DEFAULTS, ...options };
  const all = (items ?? [])
    .filter((item) => typeof item?.value === "number" && Number.isFinite(item.value) && item.value >= 0)
    .map((item) => ({ name: String(item.name), value: item.value, label: String(item.label ?? item.name) }))
    .sort((a, b) => a.value - b.value);
  const spanEnd = typeof o.spanEnd === "number" && Number.isFinite(o.spanEnd) && o.spanEnd > 0 ? o.spanEnd : null;
  const usable = spanEnd === null ? all : all.filter((item) => item.value <= spanEnd);
  const later = spanEnd === null ? [] : all.filter((item) => item.value > spanEnd);
  const left = o.marginLeft;
  const right = o.width - o.marginRight;
  const dataMax = spanEnd ?? (usable.length ? usable[usable.length - 1].value : 0);
  const ticksRaw = tickValues(dataMax, o.maxTicks);
  const max = ticksRaw[ticksRaw.length - 1];
  const x = (value) => left + (value / max) * (right - left);

  // Greedy lane assignment in time order: the lowest lane where the label fits after the
  // previous label of that lane. A label runs right of its mark, or left of it near the end.
  const laneEnds = [];
  const placed = usable.map((item) => {
    const markX = x(item.value);
    const labelWidth = o.measure ? o.measure(item.label) : item.label.length * o.charWidth;
    const fitsRight = markX + o.labelPad + labelWidth <= o.width;
    const fitsLeft = markX - o.labelPad - labelWidth >= 0;
    const anchor = !fitsRight && fitsLeft ? "end" : "start";
    // Fits neither side (narrow chart): as far right as it can while staying inside.
    const textX0 = fitsRight
      ? markX + o.labelPad
      : fitsLeft
        ? markX - o.labelPad - labelWidth
        : Math.max(0, o.width - labelWidth);
    const textX1 = textX0 + labelWidth;
    // The mark's own line must not cross a label of the lanes it passes through, so the label
    // extent used for packing includes the mark itself.
    const x0 = Math.min(textX0, markX);
    const x1 = Math.max(textX1, markX);
    let lane = laneEnds.findIndex((end) => end + o.labelGap <= x0);
    if (lane === -1) {
      lane = laneEnds.length;
      laneEnds.push(x1);
    } else {
      laneEnds[lane] = x1;
    }
    return { ...item, x: markX, lane, anchor, labelWidth, textX0, textX1 };
  });

  const lanes = Math.max(1, laneEnds.length);
  const axisY = o.marginTop + lanes * o.laneHeight + o.axisGap;
  const marks = placed.map((mark) => ({
    ...mark,
    labelX: mark.anchor === "start" ? mark.textX0 : mark.textX1,
    // lane 0 is the one nearest the axis; labelY is the text's baseline
    labelY: axisY - o.axisGap - mark.lane * o.laneHeight - o.laneHeight * 0.3,
  }));
  return {
    width: o.width,
    // below the tick numbers, one line per later milestone
    height: axisY + o.tickLabelHeight + later.length * o.laneHeight,
    later,
    axisY,
    left,
    right,
    max,
    lanes,
    ticks: ticksRaw.map((value) => ({ value, x: x(value) })),
    marks,
  };
}
