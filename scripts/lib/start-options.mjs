// What `npm start` accepts and what it refuses before it does anything (issue 30, items 1 and 2):
// its options (Node's util.parseArgs, strict: a mistyped option is a usage error, not ignored),
// its --help, and whether Firefox can show a window at all. Pure: argv and the environment come
// in, options or a UsageError go out; scripts/start.mjs prints and exits.
import { parseArgs } from "node:util";

export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
  }
}

/** The options, in the order --help lists them. */
const OPTIONS = {
  headless: { type: "boolean", help: "run Firefox without a window (-headless): over SSH, on a server, in CI" },
  "no-host": { type: "boolean", help: "do not build or register the native host (the page then says it is missing)" },
  firefox: {
    type: "string",
    value: "PATH",
    help: "this Firefox (a binary or its install folder; $FIREFOX does the same); its flavour is still chosen by what it is",
  },
  flavour: { type: "string", value: "full|basic", help: "force the flavour of the add-on instead of choosing it by the Firefox" },
  help: { type: "boolean", short: "h", help: "print this and exit" },
};

export const USAGE = `npm start [-- OPTION…]: build and register the native host, then open about:startup in a
Firefox with the add-on installed for this session (web-ext run, a fresh temporary profile).
Options (after \`--\`, e.g. npm start -- --headless):
${Object.entries(OPTIONS)
  .map(([name, o]) => `  ${`${o.short ? `-${o.short}, ` : ""}--${name}${o.value ? ` ${o.value}` : ""}`.padEnd(24)}${o.help}`)
  .join("\n")}
Ctrl-C stops Firefox and npm start.`;

/** The known option closest to a mistyped one (`--headles` → `--headless`), or null. */
export function closestOption(name) {
  const distance = (a, b) => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) {
        next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      row = next;
    }
    return row[b.length];
  };
  const bare = name.replace(/^-+/, "").split("=")[0];
  const [best] = Object.keys(OPTIONS)
    .map((known) => ({ known, d: distance(bare, known) }))
    .sort((a, b) => a.d - b.d);
  return best && best.d <= 2 ? `--${best.known}` : null;
}

/** Node's words for what went wrong, with the option named first and a likely fix. */
function usageMessage(error) {
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const name = /'([^']+)'/.exec(error.message)?.[1] ?? "?";
    const near = closestOption(name);
    return `unknown option ${name}${near ? ` (did you mean ${near}?)` : ""}`;
  }
  if (error.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const word = /'([^']+)'/.exec(error.message)?.[1] ?? "?";
    return `unexpected argument ${word}: npm start takes only options`;
  }
  // A string option without its value (`--firefox` last, or followed by another option).
  const name = /'(--[a-z-]+)/.exec(error.message)?.[1];
  return name ? `${name} needs a value (${name} ${OPTIONS[name.slice(2)]?.value ?? "VALUE"})` : error.message.split("\n")[0];
}

/**
 * start's options from `args` (what follows `npm start --`): {help, headless, noHost, firefox,
 * flavour}. Throws UsageError naming the option for anything it does not know.
 */
export function parseStartArgs(args) {
  const options = Object.fromEntries(Object.entries(OPTIONS).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}) }]));
  let values;
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (error) {
    if (typeof error?.code === "string" && error.code.startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError(usageMessage(error));
    }
    throw error;
  }
  const flavour = values.flavour ?? null;
  if (flavour !== null && !["full", "basic"].includes(flavour)) {
    throw new UsageError(`--flavour ${flavour}: use full or basic`);
  }
  return {
    help: values.help === true,
    headless: values.headless === true,
    noHost: values["no-host"] === true,
    firefox: values.firefox ?? null,
    flavour,
  };
}

/**
 * Why Firefox could not open a window here, or null when it can: without --headless it needs
 * a display server, named by DISPLAY (X11) or WAYLAND_DISPLAY (Wayland); MOZ_HEADLESS=1 makes
 * Firefox headless by itself. Over SSH or on a server neither is set, Firefox exits at once
 * ("Error: no DISPLAY environment variable specified") and web-ext would wait 30 s on it.
 */
export function displayProblem({ headless, env }) {
  if (headless || (env.MOZ_HEADLESS && env.MOZ_HEADLESS !== "0") || env.DISPLAY || env.WAYLAND_DISPLAY) {
    return null;
  }
  return "no display to open Firefox's window on (neither DISPLAY nor WAYLAND_DISPLAY is set: over SSH or on a server?). Run it without a window: npm start -- --headless";
}
