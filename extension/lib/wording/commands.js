// The host's commands as the page prints them: by the name or path that runs the host for this
// user, as the host itself says in `hello`'s `cli` (docs/PROTOCOL.md; native-host/src/invocation.rs),
// so every command runs as printed (issue 19: `sudo about-startup-host …` was "command not
// found" when the binary was only in the clone). Pure.

/** The binary's name: what an older host (no `cli` in `hello`) is printed as. */
export const HOST_BINARY_NAME = "about-startup-host";

/**
 * {run(args), runAsRoot(args), onPath} from a `hello` reply (or null before one came): `run`
 * prefixes the command this user types, `runAsRoot` the one that runs it as root (`sudo …`, or
 * nothing in front for root).
 */
export function hostCommands(hello) {
  const cli = hello?.cli;
  const plain = typeof cli?.command === "string" && cli.command ? cli.command : HOST_BINARY_NAME;
  const root =
    typeof cli?.root_command === "string" && cli.root_command ? cli.root_command : hello?.root === true ? plain : `sudo ${plain}`;
  return {
    run: (args) => `${plain} ${args}`,
    runAsRoot: (args) => `${root} ${args}`,
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
