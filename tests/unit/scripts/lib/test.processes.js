import { test } from "node:test";
import assert from "node:assert/strict";
import { processesWithHome } from "../../../../scripts/lib/processes.mjs";

test("finds the processes whose environment has exactly HOME=<home>", () => {
  const environ = {
    "/proc/10/environ": "PATH=/bin\0HOME=/tmp/b/home\0X=1\0",
    "/proc/11/environ": "HOME=/tmp/b/home\0",
    "/proc/12/environ": "HOME=/tmp/b/home2\0",
    "/proc/13/environ": "OTHERHOME=/tmp/b/home\0",
    "/proc/14/environ": null, // not ours to read
  };
  const fsApi = {
    readdirSync: () => ["10", "11", "12", "13", "14", "15", "self", "cpuinfo"],
    readFileSync: (file) => {
      if (!environ[file]) {
        throw new Error("EACCES");
      }
      return Buffer.from(environ[file]);
    },
  };
  assert.deepEqual(processesWithHome("/tmp/b/home", { fsApi, self: 15 }), [10, 11]);
  assert.deepEqual(processesWithHome("/tmp/b/home", { fsApi, self: 10 }), [11]);
});
