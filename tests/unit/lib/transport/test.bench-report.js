import { test } from "node:test";
import assert from "node:assert/strict";
import { NOT_BENCHMARKING, reportToBench } from "../../../../extension/lib/transport/bench-report.js";
import { HostError } from "../../../../extension/lib/transport/host-client.js";

const record = { id: "full-1", milestones: { sessionRestored: 1905 } };

test("a benchmarked start sends its record with bench_record", async () => {
  const sent = [];
  const status = await reportToBench(record, async (command, params) => {
    sent.push([command, params]);
    return { path: "/tmp/x.json" };
  });
  assert.equal(status, "sent");
  assert.deepEqual(sent, [["bench_record", { record }]]);
});

test("an ordinary start: the host's not_benchmarking is not an error", async () => {
  const refuse = async () => {
    throw new HostError({ code: NOT_BENCHMARKING, message: "no benchmark is running", params: {} });
  };
  assert.equal(await reportToBench(record, refuse), "not-benchmarking");
});

test("no record, no request; other host errors reach the caller", async () => {
  let asked = false;
  assert.equal(
    await reportToBench(null, async () => {
      asked = true;
    }),
    "no-record",
  );
  assert.equal(asked, false);
  const broken = async () => {
    throw new HostError({ code: "io_error", message: "disk full", params: {} });
  };
  await assert.rejects(reportToBench(record, broken), { code: "io_error" });
});
