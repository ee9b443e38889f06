// Putting the page cache in each scenario's state before a launch, with the product's own host:
//   cold     about-startup-host evict (Firefox's install folder only; no Firefox is running)
//   preload  evict, then about-startup-host preload, timed, inside the slow-disk group
//   hot      about-startup-host preload, untimed and unthrottled: everything is in
// Collaborators are parameters (exec = spawnSync, now = performance.now) so tests pass fakes.
import { spawnSync } from "node:child_process";

function host(exec, hostBinary, args, wrap = (argv) => argv) {
  const argv = wrap([hostBinary, ...args]);
  const result = exec(argv[0], argv.slice(1), { encoding: "utf8", maxBuffer: 64 << 20 });
  if (result.status !== 0) {
    throw new Error(`${[hostBinary, ...args].join(" ")} failed (${result.status}): ${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

/**
 * Prepares `scenario`. Returns {preloadMs: number | null, evicted: pages dropped | null,
 * preloadMbPerS: number | null}.
 */
export function prepareScenario(scenario, { hostBinary, installDir, wrap = (argv) => argv, exec = spawnSync, now = () => performance.now() }) {
  const args = (command) => [command, "--firefox", installDir, "--json"];
  if (scenario === "hot") {
    host(exec, hostBinary, args("preload"));
    return { preloadMs: null, evicted: null, preloadMbPerS: null };
  }
  const evicted = host(exec, hostBinary, args("evict"));
  if (scenario === "cold") {
    return { preloadMs: null, evicted: evicted.pages_dropped ?? null, preloadMbPerS: null };
  }
  if (scenario === "preload") {
    const start = now();
    const summary = host(exec, hostBinary, args("preload"), wrap);
    // The wall time of the whole command (process start included): what a user waits for.
    const preloadMs = now() - start;
    return { preloadMs, evicted: evicted.pages_dropped ?? null, preloadMbPerS: summary.mb_per_s ?? null };
  }
  throw new Error(`unknown scenario ${scenario}`);
}
