// The benchmark's chart as an SVG document (a string): one row per scenario, a bar for the mean
// time to sessionRestored (the preload's own time stacked before it, hatched), the 95% confidence
// interval of their sum as a whisker, and every run as a dot. Pure; text is escaped.
import { summarize } from "../../extension/lib/models/stats.js";
import { niceStep } from "../../extension/lib/models/timeline.js";

const escapeXml = (text) =>
  String(text).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);

/**
 * rows: [{scenario, runs: [{preloadMs|null, sessionRestored}]}]; title, subtitle: strings.
 * Returns the SVG text.
 */
export function benchChart(rows, { title = "Firefox startup", subtitle = "", width = 760 } = {}) {
  const left = 110;
  const right = 30;
  const top = subtitle ? 64 : 44;
  const rowHeight = 46;
  const bottom = 60;
  const height = top + rows.length * rowHeight + bottom;
  const plotWidth = width - left - right;
  const totals = rows.flatMap((row) => row.runs.map((r) => (r.preloadMs ?? 0) + r.sessionRestored));
  const max = Math.max(1, ...totals);
  // The page's one tick rule (1, 2 or 5 × 10^k), for about six ticks.
  const step = niceStep(max, 6);
  const axisMax = Math.ceil(max / step) * step;
  const x = (ms) => left + (ms / axisMax) * plotWidth;
  const f = (v) => Number(v.toFixed(1));
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
      '<rect width="6" height="6" fill="#f4c27a"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c98a2e" stroke-width="2"/></pattern></defs>',
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  if (subtitle) {
    out.push(`<text x="${left}" y="42" fill="#555">${escapeXml(subtitle)}</text>`);
  }
  const axisY = top + rows.length * rowHeight;
  for (let t = 0; t <= axisMax + 1e-9; t += step) {
    out.push(`<line x1="${f(x(t))}" y1="${top - 6}" x2="${f(x(t))}" y2="${axisY}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${f(x(t))}" y="${axisY + 16}" text-anchor="middle" fill="#333">${escapeXml((t / 1000).toLocaleString("en-US", { maximumFractionDigits: 2 }))}</text>`);
  }
  out.push(`<text x="${left + plotWidth / 2}" y="${axisY + 36}" text-anchor="middle" fill="#333">seconds (mean, 95% CI of the total, each run a dot)</text>`);
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    const barY = y + 8;
    const barH = rowHeight - 22;
    const pre = summarize(row.runs.map((r) => r.preloadMs));
    const start = summarize(row.runs.map((r) => r.sessionRestored));
    const total = summarize(row.runs.map((r) => (r.preloadMs ?? 0) + r.sessionRestored));
    out.push(`<text x="${left - 8}" y="${f(barY + barH / 2 + 4)}" text-anchor="end" font-weight="bold">${escapeXml(row.scenario)}</text>`);
    let from = 0;
    if (pre.n > 0) {
      out.push(`<rect x="${f(x(0))}" y="${barY}" width="${f(x(pre.mean) - x(0))}" height="${barH}" fill="url(#hatch)"><title>${escapeXml(`preload ${Math.round(pre.mean)} ms`)}</title></rect>`);
      from = pre.mean;
    }
    if (start.n > 0) {
      out.push(`<rect x="${f(x(from))}" y="${barY}" width="${f(x(from + start.mean) - x(from))}" height="${barH}" fill="#4a7fc1"><title>${escapeXml(`sessionRestored ${Math.round(start.mean)} ms`)}</title></rect>`);
    }
    if (total.ci) {
      const cy = barY + barH / 2;
      out.push(`<path d="M${f(x(total.ci.low))} ${f(cy)}H${f(x(total.ci.high))}M${f(x(total.ci.low))} ${f(cy - 6)}v12M${f(x(total.ci.high))} ${f(cy - 6)}v12" stroke="#111" stroke-width="1.5" fill="none"/>`);
    }
    for (const r of row.runs) {
      out.push(`<circle cx="${f(x((r.preloadMs ?? 0) + r.sessionRestored))}" cy="${f(barY + barH + 5)}" r="2.5" fill="#111" fill-opacity="0.5"/>`);
    }
    if (total.n > 0) {
      const label = `${(total.mean / 1000).toFixed(2)} s${pre.n > 0 ? ` (preload ${(pre.mean / 1000).toFixed(2)} s + start ${(start.mean / 1000).toFixed(2)} s)` : ""}`;
      const lx = x(total.ci ? total.ci.high : total.mean) + 8;
      const anchor = lx > width - 200 ? "end" : "start";
      const tx = anchor === "end" ? width - right : lx;
      out.push(`<text x="${f(tx)}" y="${f(barY - 1)}" text-anchor="${anchor}" fill="#333">${escapeXml(label)}</text>`);
    }
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
