// What the extension tells the host about its Firefox in `hello` (docs/PROTOCOL.md, `browser`):
// a Snap or Flatpak Firefox starts native hosts through the desktop portal, so the host's parent
// process is not Firefox and the host finds the Firefox it serves by matching this against the
// running processes. Pure, so the unit tests pass their own connection and browser info.

/** `runtime.getBrowserInfo()` → hello's `browser` ({version, build_id}), or null. */
export function helloHint(info) {
  const version = typeof info?.version === "string" ? info.version : null;
  const buildId = typeof info?.buildID === "string" ? info.buildID : null;
  return version || buildId ? { version, build_id: buildId } : null;
}

/**
 * Makes every `hello` sent through `connection` (a HostConnection: send(command, params,
 * options)) carry `browser: getHint()` when there is one and the caller did not set it.
 */
export function withHelloHint(connection, getHint) {
  const send = connection.send.bind(connection);
  connection.send = (command, params = {}, options = {}) => {
    const hint = command === "hello" && !("browser" in params) ? getHint() : null;
    return send(command, hint ? { ...params, browser: hint } : params, options);
  };
  return connection;
}
