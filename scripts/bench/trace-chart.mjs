// Seed 000's picture from a trace, as an SVG document (a string): file offset (top = start of the
// file) against time for one file, ELF sections shaded and named, one aggregated cell per
// (time, offset) bin. Pure; text is escaped. Used for docs/bench/libxul-access-pattern.svg:
//   node scripts/bench/trace-chart.mjs TRACE.json [libxul.so] > out.svg
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { accessPattern, findFile, sectionBands } from "../../extension/lib/models/trace.js";

const escapeXml = (text) =>
  String(text).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);
const COLOURS = ["#d9534f", "#5b9bd5", "#70ad47", "#ffc000", "#a5a5a5", "#9e480e", "#7030a0", "#264478"];

/** The SVG of file `name`'s access pattern in `trace`, over [0, span] ms (default: its last read). */
export function accessPatternSvg(trace, name, { title = null, span = null, width = 760, height = 420 } = {}) {
  const f = findFile(trace, name);
  if (f < 0) {
    throw new Error(`${name} is not in the trace`);
  }
  const file = trace.files[f];
  const last = Math.max(1, ...trace.events.filter((e) => e.f === f).map((e) => e.t));
  const s = span ?? Math.ceil(last * 1.05);
  const grid = accessPattern(trace, f, { cols: 240, rows: 160, span: s });
  const left = 60;
  const right = 110;
  const top = 50;
  const bottom = 40;
  const w = width - left - right;
  const h = height - top - bottom;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`];
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${left}" y="20" font-size="15" font-weight="bold">${escapeXml(title ?? `${file.path}: file offset against time`)}</text>`);
  out.push(
    `<text x="${left}" y="38" fill="#555">${escapeXml(`${grid.reads} reads, ${(file.bytes_read / 1e6).toFixed(1)} of ${((file.size ?? 0) / 1e6).toFixed(1)} MB; Firefox ${trace.firefox_version ?? "?"}; dark: readahead windows, red: faults without one`)}</text>`,
  );
  sectionBands(file).forEach((b, i) => {
    const y = top + b.from * h;
    const bh = Math.max(1, (b.to - b.from) * h);
    const c = COLOURS[i % COLOURS.length];
    out.push(`<rect x="${left}" y="${y.toFixed(1)}" width="${w}" height="${bh.toFixed(1)}" fill="${c}" fill-opacity="0.18"/>`);
    out.push(`<text x="${left + w + 6}" y="${(y + Math.min(bh, 14) - 3).toFixed(1)}" fill="${c}">${escapeXml(b.name)}</text>`);
  });
  const cw = w / grid.cols;
  const ch = h / grid.rows;
  const max = Math.max(1, ...grid.cells.map((c) => c.pages));
  for (const c of grid.cells) {
    const fault = (c.kinds.fault ?? 0) + (c.kinds.read ?? 0) > c.pages / 2;
    const o = 0.35 + 0.65 * Math.min(1, c.pages / max);
    out.push(
      `<rect x="${(left + c.col * cw).toFixed(1)}" y="${(top + c.row * ch).toFixed(1)}" width="${Math.max(1.5, cw).toFixed(1)}" height="${Math.max(1.5, ch).toFixed(1)}" fill="${fault ? "#d9534f" : "#222"}" fill-opacity="${o.toFixed(2)}"/>`,
    );
  }
  out.push(`<line x1="${left}" y1="${top + h}" x2="${left + w}" y2="${top + h}" stroke="#333"/>`);
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${top + h}" stroke="#333"/>`);
  const step = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((v) => s / v <= 8) ?? 10000;
  for (let t = 0; t <= s; t += step) {
    const x = left + (t / s) * w;
    out.push(`<text x="${x.toFixed(1)}" y="${top + h + 16}" text-anchor="middle" fill="#333">${t}</text>`);
  }
  out.push(`<text x="${left + w / 2}" y="${height - 6}" text-anchor="middle" fill="#333">ms since the Firefox process started</text>`);
  out.push(`<text x="${left - 8}" y="${top + 10}" text-anchor="end" fill="#333">0</text>`);
  out.push(`<text x="${left - 8}" y="${top + h}" text-anchor="end" fill="#333">${escapeXml(`${((file.size ?? 0) / 1e6).toFixed(0)} MB`)}</text>`);
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, name = "libxul.so"] = process.argv.slice(2);
  process.stdout.write(accessPatternSvg(JSON.parse(fs.readFileSync(file, "utf8")), name));
}
