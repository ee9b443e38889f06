// The timeline chart of the current start: an SVG drawn from the milestone rows with the layout
// from ../lib/models/timeline.js. The milestones table stays the accessible source of the same figures;
// the chart is one image with a title and a description.
import { t, tn } from "../lib/wording/i18n.js";
import { startSpanEnd, timelineLayout } from "../lib/models/timeline.js";
import { formatMs, formatNumber } from "../lib/wording/format.js";
import { svgEl } from "./dom.js";


/** Measures label widths with the font the chart's labels really use. */
function textMeasurer(container) {
  const context = document.createElement("canvas").getContext("2d");
  const style = getComputedStyle(container);
  context.font = `${style.fontSize} ${style.fontFamily}`;
  return (text) => context.measureText(text).width;
}


let last = null; // the rows and origin drawn last, redrawn when the section changes width

/**
 * Draws `rows` (milestoneRows(...).rows: {name, sinceOrigin}) into #timeline; `origin` names the
 * milestone times are relative to. No rows: the section is hidden. Missing milestones are not
 * in `rows` at all, so they are never drawn (and never at 0).
 */
export function drawTimeline(rows, origin) {
  last = { rows, origin };
  const section = document.getElementById("timeline-section");
  const container = document.getElementById("timeline");
  const items = (rows ?? []).map((row) => ({
    name: row.name,
    value: row.sinceOrigin,
    label: `${row.name} ${formatMs(row.sinceOrigin)}`,
  }));
  if (items.length === 0) {
    section.hidden = true;
    container.replaceChildren();
    return;
  }
  section.hidden = false;
  const width = Math.max(320, Math.floor(container.clientWidth || 720));
  // The axis spans the start (to sessionRestored); later milestones are listed at its edge.
  const spanEnd = startSpanEnd(items);
  const layout = timelineLayout(items, { width, measure: textMeasurer(container), spanEnd });
  container.dataset.spanEnd = String(spanEnd ?? "");
  container.dataset.axisMax = String(layout.max);
  container.dataset.later = layout.later.map((m) => m.name).join(" ");

  const titleId = "timeline-title";
  const descId = "timeline-desc";
  const first = layout.marks[0];
  const final = layout.marks[layout.marks.length - 1];
  const chart = svgEl("svg", {
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    role: "img",
    "aria-labelledby": `${titleId} ${descId}`,
    "data-testid": "timeline-svg",
  });
  chart.append(
    svgEl("title", { id: titleId }, t("timelineTitle")),
    svgEl("desc", { id: descId }, tn("timelineDesc", layout.marks.length, [
      String(layout.marks.length),
      first.name,
      final.name,
      formatMs(final.value),
      origin ?? first.name,
    ])),
  );

  // Axis, ticks and tick numbers.
  const axis = svgEl("g", { class: "timeline-axis" });
  axis.append(svgEl("line", { x1: layout.left, x2: layout.right, y1: layout.axisY, y2: layout.axisY }));
  layout.ticks.forEach((tick, i) => {
    axis.append(svgEl("line", { x1: tick.x, x2: tick.x, y1: layout.axisY, y2: layout.axisY + 5 }));
    const anchor = i === 0 ? "start" : i === layout.ticks.length - 1 ? "end" : "middle";
    // the last tick carries the unit
    const label = i === layout.ticks.length - 1 ? formatMs(tick.value, undefined, { fractionDigits: 1 }) : formatNumber(tick.value, undefined, { fractionDigits: 1 });
    axis.append(svgEl("text", { x: tick.x, y: layout.axisY + 18, "text-anchor": anchor }, label));
  });

  // The gaps between consecutive milestones as alternating bands on the axis.
  const gaps = svgEl("g", { class: "timeline-gaps" });
  for (let i = 1; i < layout.marks.length; i++) {
    const x0 = layout.marks[i - 1].x;
    const x1 = layout.marks[i].x;
    if (x1 > x0) {
      gaps.append(svgEl("rect", { x: x0, y: layout.axisY - 4, width: x1 - x0, height: 8, class: i % 2 ? "odd" : "even" }));
    }
  }

  // One mark per milestone: a line from the axis up to its label, a dot on the axis.
  const marks = svgEl("g", { class: "timeline-marks" });
  const labels = svgEl("g", { class: "timeline-labels" });
  for (const mark of layout.marks) {
    const group = svgEl("g", { class: "timeline-mark", "data-milestone": mark.name, "data-value": mark.value });
    group.append(
      svgEl("title", {}, t("timelineMark", [mark.name, formatMs(mark.value), origin ?? first.name])),
      svgEl("line", { x1: mark.x, x2: mark.x, y1: layout.axisY, y2: mark.labelY - 10 }),
      svgEl("circle", { cx: mark.x, cy: layout.axisY, r: 3.5 }),
    );
    marks.append(group);
    labels.append(svgEl("text", { x: mark.labelX, y: mark.labelY, "text-anchor": mark.anchor }, mark.label));
  }
  // Milestones after the start's end: listed at the right edge under the axis, each with its
  // time, after an arrow that says they are off the axis to the right.
  const later = svgEl("g", { class: "timeline-later", "data-testid": "timeline-later" });
  layout.later.forEach((mark, i) => {
    const text = svgEl("text", { x: layout.right, y: layout.axisY + 18 + (i + 1) * 18, "text-anchor": "end", "data-milestone": mark.name }, t("timelineLater", [mark.name, formatMs(mark.value)]));
    later.append(text);
  });
  chart.append(gaps, axis, marks, labels, later);
  container.replaceChildren(chart);
}

let resizeTimer = null;
new ResizeObserver(() => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    const container = document.getElementById("timeline");
    const drawn = container?.firstElementChild;
    if (last && drawn && Math.abs(Number(drawn.getAttribute("width")) - container.clientWidth) > 4) {
      drawTimeline(last.rows, last.origin);
    }
  }, 150);
}).observe(document.documentElement);
