// The host's commands as the page prints them: by the name or path that runs the host for this
// user, as the host itself says in `hello`'s `cli` (docs/PROTOCOL.md; native-host/src/invocation.rs),
// so every command runs as printed (issue 19: `sudo about-startup-host …` was "command not
// found" when the binary was only in the clone). Pure.

/** The binary's name: what an older host (no `cli` in `hello`) is printed as. */
export const HOST_BINARY_NAME = "about-startup-host";

/**
 * {run(args), runAsRoot(args), runAsRootItself(args), onPath} from a `hello` reply (or null
 * before one came): `run` prefixes the command this user types, `runAsRoot` the one that runs it
 * with root's part (`sudo …`, or nothing in front for root), `runAsRootItself` the one whose
 * whole command runs as root (exact residency of root's files): under plain sudo the host runs
 * the command as the user who asked (the privilege split, docs/design/privilege.md), unless
 * `SUDO_UID` is taken out of its environment first (`sudo env -u SUDO_UID …`, the host's own
 * `Invocation::run_as_root_itself`).
 */
export function hostCommands(hello) {
  const cli = hello?.cli;
  const plain = typeof cli?.command === "string" && cli.command ? cli.command : HOST_BINARY_NAME;
  const root =
    typeof cli?.root_command === "string" && cli.root_command ? cli.root_command : hello?.root === true ? plain : `sudo ${plain}`;
  const itself = root.startsWith("sudo ") ? `sudo env -u SUDO_UID ${root.slice("sudo ".length)}` : root;
  return {
    run: (args) => `${plain} ${args}`,
    runAsRoot: (args) => `${root} ${args}`,
    runAsRootItself: (args) => `${itself} ${args}`,
    onPath: cli?.on_path === true,
  };
}

/**
 * `text` (a path) as one shell word: bare when it has only characters no shell treats specially,
 * else in single quotes (as the host quotes its own path, native-host/src/invocation.rs).
 */
export function shellWord(text) {
  const value = String(text ?? "");
  if (value !== "" && /^[A-Za-z0-9/._\-+,:@%]+$/.test(value)) {
    return value;
  }
  return `'${value.replaceAll("'", "'\\''")}'`;
}
