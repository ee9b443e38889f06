// Which code and which resources a traced start read for (issue 21): the faulting instructions
// the trace names (`code`, each read's `c`) summed into code regions, and omni.ja's zip entries
// (`files[].entries`). Pure: no DOM, no browser.*. The regions are the ones the host's Profiler
// export names (native-host/src/export/view.rs, region_of_code), so the page and the profile agree.

const PAGE = 4096;
/** A stripped library has nothing finer than its section: its code is summed per 64 KiB block. */
const BLOCK = 0x10000;

function baseName(path) {
  const i = path.lastIndexOf("/");
  return i >= 0 ? path.slice(i + 1) : path;
}

/**
 * A faulting instruction as a person reads it, as trace/code.rs `label` words it: "libxul.so
 * nsFoo::Bar" with a symbol, else its address and the section holding it ("libxul.so 0x33640d4
 * (.init)", the ELF address nm and addr2line read), else, in a trace of an older host, the file
 * offset said as such ("libxul.so file offset 0x33630d4 (.init)"), else "[anon] 0x…".
 */
export function codeLabel(site) {
  const lib = baseName(site.lib);
  if (site.symbol) {
    return `${lib} ${site.symbol}`;
  }
  const at = place(site, site.address ?? site.offset);
  return site.section ? `${lib} ${at} (${site.section})` : `${lib} ${at}`;
}

function place(site, at) {
  const hex = `0x${at.toString(16)}`;
  return site.address === undefined && site.section ? `file offset ${hex}` : hex;
}

/**
 * The code region of a site: itself with a symbol, else its 64 KiB block, as trace/code.rs
 * `block_label` words it ("libxul.so 0x3360000–0x336ffff (64 KiB block)"). {label, block}.
 */
export function codeRegion(site) {
  if (site.symbol) {
    return { label: codeLabel(site), block: false };
  }
  const at = site.address ?? site.offset;
  const start = at - (at % BLOCK);
  return { label: `${baseName(site.lib)} ${place(site, start)}–0x${(start + BLOCK - 1).toString(16)} (64 KiB block)`, block: true };
}

/**
 * The code regions whose faults read the most: [{label, block, pages, bytes, reads, read:
 * [{path, bytes}] (what those faults read, most first)}], at most `limit`. Empty when the trace
 * has no fault sites (an older host, `--no-fault-sites`, the /proc fallback).
 */
export function topCode(trace, limit = 10) {
  const code = trace.code ?? [];
  if (code.length === 0) {
    return [];
  }
  const regions = new Map();
  for (const e of trace.events ?? []) {
    const site = Number.isInteger(e.c) ? code[e.c] : undefined;
    if (!site) {
      continue;
    }
    const { label, block } = codeRegion(site);
    let r = regions.get(label);
    if (!r) {
      r = { label, block, pages: 0, bytes: 0, reads: 0, files: new Map() };
      regions.set(label, r);
    }
    r.pages += e.n;
    r.bytes += e.n * PAGE;
    r.reads += 1;
    const path = trace.files[e.f]?.path ?? "?";
    r.files.set(path, (r.files.get(path) ?? 0) + e.n * PAGE);
  }
  return [...regions.values()]
    .sort((a, b) => b.bytes - a.bytes || a.label.localeCompare(b.label))
    .slice(0, limit)
    .map(({ files, ...r }) => ({
      ...r,
      read: [...files.entries()].map(([path, bytes]) => ({ path, bytes })).sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path)),
    }));
}

/** How many reads carry the instruction that faulted them: {withCode, faults} (faults: kind "fault"). */
export function faultSiteCoverage(trace) {
  let withCode = 0;
  let faults = 0;
  for (const e of trace.events ?? []) {
    withCode += Number.isInteger(e.c) ? 1 : 0;
    faults += e.k === "fault" ? 1 : 0;
  }
  return { withCode, faults };
}

/**
 * The zip entries a file's reads covered (an omni.ja), as rows: [{name, bytesRead, firstMs,
 * module, moduleMs}], most read first; null for a file that is not an archive the host parsed.
 */
export function entryRows(file) {
  if (!Array.isArray(file?.entries)) {
    return null;
  }
  return file.entries
    .map((e) => ({
      name: e.name,
      bytesRead: e.bytes_read,
      size: e.len,
      firstMs: e.first_ms ?? null,
      module: e.module ?? null,
      moduleMs: e.module_ms ?? null,
    }))
    .sort((a, b) => b.bytesRead - a.bytesRead || a.name.localeCompare(b.name));
}

/**
 * A file's name as a person tells it apart: inside Firefox's install folder (the trace's
 * `install_dir`) its path there ("omni.ja", "browser/omni.ja"), else its base name ("libc.so.6").
 */
export function installName(path, installDir = null) {
  if (installDir && path.startsWith(`${installDir}/`)) {
    return path.slice(installDir.length + 1);
  }
  return path.endsWith("/browser/omni.ja") ? "browser/omni.ja" : baseName(path);
}

/** The entries this start read the most, across its archives: [{archive, ...entryRow}], at most `limit`. */
export function topEntries(trace, limit = 10) {
  return trace.files
    .flatMap((f) => (entryRows(f) ?? []).map((row) => ({ archive: installName(f.path, trace.install_dir ?? null), ...row })))
    .sort((a, b) => b.bytesRead - a.bytesRead || a.name.localeCompare(b.name))
    .slice(0, limit);
}
