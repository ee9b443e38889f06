// Loaded (`node --require`) into the profiler-cli client that test.profiler.js runs for each
// query. The client gives the loader's daemon a fixed 30 s to answer a query (dist/profiler-cli.js:
// its socket's setTimeout(3e4)), with no option to change it; a 2-core machine at load 13 missed
// it for `profile info --all` of a cold start ("Timed out after 30000ms waiting for the daemon",
// issue 37). The query's limit is the test's own (PROFILER_QUERY_LIMIT_MS, test.profiler.js's
// QUERY_LIMIT_MS): that socket timeout of 30 s is raised to it, nothing else changes.
"use strict";
const net = require("node:net");
const process = require("node:process");

const limit = Number(process.env.PROFILER_QUERY_LIMIT_MS);
if (limit > 0) {
  const setTimeout = net.Socket.prototype.setTimeout;
  net.Socket.prototype.setTimeout = function (ms, ...rest) {
    return setTimeout.call(this, ms === 30000 ? limit : ms, ...rest);
  };
}
