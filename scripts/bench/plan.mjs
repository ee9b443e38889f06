// The order of a benchmark's launches: one uncounted warm-up per scenario, then the counted runs
// interleaved run by run (cold, preload, hot, cold, preload, hot, …) so that drift of the machine
// (other load, thermal state, a cache filling up) hits every scenario alike. The order within a
// round rotates by one each round, so no scenario always comes right after the same other. Pure.

/** [{scenario, run (1-based; 0 for the warm-up), warmup}] in launch order. */
export function benchPlan(scenarios, runs) {
  const plan = scenarios.map((scenario) => ({ scenario, run: 0, warmup: true }));
  for (let run = 1; run <= runs; run++) {
    const shift = (run - 1) % scenarios.length;
    const round = [...scenarios.slice(shift), ...scenarios.slice(0, shift)];
    for (const scenario of round) {
      plan.push({ scenario, run, warmup: false });
    }
  }
  return plan;
}
