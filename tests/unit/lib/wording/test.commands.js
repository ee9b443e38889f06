import { test } from "node:test";
import assert from "node:assert/strict";
import { hostCommands } from "../../../../extension/lib/wording/commands.js";
import { recordedReply } from "../../host-replies.js";

// The host's own `hello` replies (tests/fixtures/host/hello-*.json, recorded by
// scripts/record-host-replies.mjs): as the ordinary user nobody, and as root.
const USER = recordedReply("hello-user").reply.data;
const ROOT = recordedReply("hello-root").reply.data;

test("residency as root itself: under sudo SUDO_UID is taken out, else the host runs it as the user (privilege split)", () => {
  const user = hostCommands(USER);
  // What root's part needs (the tracer): the host's own root command.
  assert.equal(user.runAsRoot("launch --cold --trace"), `${USER.cli.root_command} launch --cold --trace`);
  // What must run as root as a whole: `sudo env -u SUDO_UID` and the host's path (sudo's
  // secure_path has no user folders), as the host's Invocation::run_as_root_itself prints it.
  assert.equal(user.runAsRootItself("residency"), `sudo env -u SUDO_UID ${USER.cli.command} residency`);
  // Root already: nothing in front.
  assert.equal(hostCommands(ROOT).runAsRootItself("residency"), `${ROOT.cli.command} residency`);
  // Before a hello: the bare name, with sudo.
  assert.equal(hostCommands(null).runAsRootItself("residency"), "sudo env -u SUDO_UID about-startup-host residency");
});
