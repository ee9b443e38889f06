// Hands this start's record to the startup benchmark (`npm run bench`, docs/benchmarks.md), when
// one is running. The benchmark starts Firefox with ABOUT_STARTUP_BENCH_OUT set; Firefox passes
// its environment to the native host, which writes the record there (`bench_record`,
// docs/PROTOCOL.md). On every ordinary start the host answers `not_benchmarking` and nothing
// happens. Pure: the host request comes in as a parameter.

/** The host's error code for "no benchmark is running". */
export const NOT_BENCHMARKING = "not_benchmarking";

/**
 * Sends `record` to the host. Resolves with "sent", "not-benchmarking" (an ordinary start) or
 * "no-record"; rejects on other host errors (the caller logs them).
 */
export async function reportToBench(record, requestHost) {
  if (!record) {
    return "no-record";
  }
  try {
    await requestHost("bench_record", { record });
    return "sent";
  } catch (error) {
    if (error?.code === NOT_BENCHMARKING) {
      return "not-benchmarking";
    }
    throw error;
  }
}

/** Closes every window: on Linux that quits Firefox the ordinary way (sessions saved, profile unlocked). */
export async function quitFirefox(windows) {
  const all = await windows.getAll();
  await Promise.allSettled(all.map((w) => windows.remove(w.id)));
  return all.length;
}
