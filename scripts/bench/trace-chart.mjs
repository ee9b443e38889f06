// Seed 000's picture from a trace, as an SVG document (a string): file offset (top = start of the
// file) against time for one file, ELF sections shaded and named, one aggregated cell per
// (time, offset) bin. The bins are the host's (`trace summary`, the page's own figures);
// this only lays them out. Pure; text is escaped. Used for docs/bench/libxul-access-pattern.svg:
//   about-startup-host trace summary TRACE.json --file libxul.so > summary.json
//   node scripts/bench/trace-chart.mjs summary.json > out.svg
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { niceStep } from "../../extension/lib/models/timeline.js";
import { formatBytes } from "../../extension/lib/wording/format.js";

const escapeXml = (text) =>
  String(text).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);
const COLOURS = ["#d9534f", "#5b9bd5", "#70ad47", "#ffc000", "#a5a5a5", "#9e480e", "#7030a0", "#264478"];

/**
 * The SVG of the access pattern in `summary` (the host's trace summary: its `pattern`, over
 * [0, span_ms]); `firefoxVersion` for the subtitle.
 */
export function accessPatternSvg(summary, { title = null, firefoxVersion = "?", width = 760, height = 420 } = {}) {
  const grid = summary?.pattern;
  if (!grid) {
    throw new Error("the summary has no access pattern: ask `trace summary --file NAME` for a file the trace read");
  }
  const s = summary.span_ms;
  const left = 60;
  const right = 110;
  const top = 50;
  const bottom = 40;
  const w = width - left - right;
  const h = height - top - bottom;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`];
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  const mb = (bytes) => formatBytes(bytes, "en-US");
  out.push(`<text x="${left}" y="20" font-size="15" font-weight="bold">${escapeXml(title ?? `${grid.path}: file offset against time`)}</text>`);
  out.push(
    `<text x="${left}" y="38" fill="#555">${escapeXml(`${grid.reads} reads, ${mb(grid.bytes_read)} of ${mb(grid.file_size ?? 0)}; Firefox ${firefoxVersion}; dark: readahead windows, red: faults without one`)}</text>`,
  );
  grid.bands.forEach((b, i) => {
    const y = top + b.from * h;
    const bh = Math.max(1, (b.to - b.from) * h);
    const c = COLOURS[i % COLOURS.length];
    out.push(`<rect x="${left}" y="${y.toFixed(1)}" width="${w}" height="${bh.toFixed(1)}" fill="${c}" fill-opacity="0.18"/>`);
    out.push(`<text x="${left + w + 6}" y="${(y + Math.min(bh, 14) - 3).toFixed(1)}" fill="${c}">${escapeXml(b.name)}</text>`);
  });
  const cw = w / grid.cols;
  const ch = h / grid.rows;
  let max = 1;
  for (const [, , pages] of grid.cells) {
    max = Math.max(max, pages);
  }
  grid.cells.forEach(([col, row, pages], i) => {
    const fault = grid.marks[i] === "fault";
    const o = 0.35 + 0.65 * Math.min(1, pages / max);
    out.push(
      `<rect x="${(left + col * cw).toFixed(1)}" y="${(top + row * ch).toFixed(1)}" width="${Math.max(1.5, cw).toFixed(1)}" height="${Math.max(1.5, ch).toFixed(1)}" fill="${fault ? "#d9534f" : "#222"}" fill-opacity="${o.toFixed(2)}"/>`,
    );
  });
  out.push(`<line x1="${left}" y1="${top + h}" x2="${left + w}" y2="${top + h}" stroke="#333"/>`);
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${top + h}" stroke="#333"/>`);
  const step = niceStep(s, 8);
  for (let t = 0; t <= s + 1e-9; t += step) {
    const x = left + (t / s) * w;
    out.push(`<text x="${x.toFixed(1)}" y="${top + h + 16}" text-anchor="middle" fill="#333">${t}</text>`);
  }
  out.push(`<text x="${left + w / 2}" y="${height - 6}" text-anchor="middle" fill="#333">ms since the Firefox process started</text>`);
  out.push(`<text x="${left - 8}" y="${top + 10}" text-anchor="end" fill="#333">0</text>`);
  out.push(`<text x="${left - 8}" y="${top + h}" text-anchor="end" fill="#333">${escapeXml(mb(grid.file_size ?? 0))}</text>`);
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, firefoxVersion = "?"] = process.argv.slice(2);
  process.stdout.write(accessPatternSvg(JSON.parse(fs.readFileSync(file, "utf8")), { firefoxVersion }));
}
