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
  lineClearance: 3, // least space between a label and another mark's line beside it
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

  // Where each label goes: right of its mark, or left of it near the end.
  const placed = usable.map((item) => {
    const markX = x(item.value);
    const labelWidth = o.measure ? o.measure(item.label) : item.label.length * o.charWidth;
    const fitsRight = markX + o.labelPad + labelWidth <= o.width;
    const fitsLeft = markX - o.labelPad - labelWidth >= 0;
    return { ...item, x: markX, lane: null, labelWidth, fitsLeft, fitsRight, ...labelSpan(markX, labelWidth, !fitsRight && fitsLeft ? "end" : "start", o) };
  });
  // A label may run either way where it fits both: of those choices, the one that strikes the
  // fewest labels through, then needs the fewest lanes (one flip at a time, while one helps).
  const cost = () => {
    const lanes = assignLanes(placed, o);
    return { lanes, score: [struckCount(placed, lanes, o), Math.max(0, ...lanes)] };
  };
  const better = (a, b) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  let best = cost();
  for (let pass = 0, improved = true; improved && pass < 20; pass++) {
    improved = false;
    for (const mark of placed.filter((m) => m.fitsLeft && m.fitsRight)) {
      const was = mark.anchor;
      Object.assign(mark, labelSpan(mark.x, mark.labelWidth, was === "start" ? "end" : "start", o));
      const next = cost();
      if (better(next.score, best.score)) {
        best = next;
        improved = true;
      } else {
        Object.assign(mark, labelSpan(mark.x, mark.labelWidth, was, o));
      }
    }
  }
  placed.forEach((mark, i) => {
    mark.lane = best.lanes[i];
    delete mark.fitsLeft;
    delete mark.fitsRight;
  });

  const lanes = Math.max(1, ...placed.map((mark) => mark.lane + 1));
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

/** A label's anchor and text extent: right of its mark ("start"), left of it ("end"), or, fitting neither side, as far right as it can. */
function labelSpan(markX, labelWidth, anchor, o) {
  const fitsRight = markX + o.labelPad + labelWidth <= o.width;
  const textX0 =
    anchor === "end" ? markX - o.labelPad - labelWidth : fitsRight ? markX + o.labelPad : Math.max(0, o.width - labelWidth);
  return { anchor, textX0, textX1: textX0 + labelWidth };
}

/** Whether mark `b`'s line stands under mark `a`'s label (or within lineClearance of it). */
function covers(a, b, o) {
  return a !== b && b.x >= a.textX0 - o.lineClearance && b.x <= a.textX1 + o.lineClearance;
}

/** How many times a mark's line runs through another mark's label, marks in `lanes`. */
function struckCount(marks, lanes, o) {
  let n = 0;
  marks.forEach((a, i) => {
    marks.forEach((b, j) => {
      n += covers(a, b, o) && lanes[j] >= lanes[i] ? 1 : 0;
    });
  });
  return n;
}

/**
 * The lane of each mark (0 nearest the axis), such that no label is struck through: a mark's
 * line runs from the axis up to its own lane, so a mark whose line stands under another mark's
 * label (within `lineClearance` of it) must sit in a lower lane than that label (issue 30, item
 * 12); and labels of one lane stay `labelGap` apart, each with its own mark's line. Marks are
 * placed once every mark under their label is (the rightmost first among those ready), each in
 * the lowest lane that keeps both rules. Only labels over each other's marks cannot both
 * hold (the caller turns labels to avoid that); then the later one placed is struck.
 */
function assignLanes(marks, o) {
  const under = marks.map((a) => marks.flatMap((b, j) => (covers(a, b, o) ? [j] : [])));
  const extent = (m) => [Math.min(m.textX0, m.x), Math.max(m.textX1, m.x)];
  const lanes = marks.map(() => null);
  const byLane = [];
  for (let n = 0; n < marks.length; n++) {
    const open = marks.map((_, i) => i).filter((i) => lanes[i] === null);
    const ready = open.filter((i) => under[i].every((j) => lanes[j] !== null));
    // Rightmost first; with none ready (labels over each other's marks), the rightmost left.
    const i = (ready.length > 0 ? ready : open).reduce((best, j) => (marks[j].x >= marks[best].x ? j : best));
    const [x0, x1] = extent(marks[i]);
    let lane = Math.max(0, ...under[i].filter((j) => lanes[j] !== null).map((j) => lanes[j] + 1));
    const clash = (l) => (byLane[l] ?? []).some(([y0, y1]) => x0 < y1 + o.labelGap && y0 < x1 + o.labelGap);
    while (clash(lane)) {
      lane += 1;
    }
    lanes[i] = lane;
    (byLane[lane] ??= []).push([x0, x1]);
  }
  return lanes;
}
