// The aboutStartup experiment API, which only the full flavour declares. Looked up at run time
// so the same page works in both flavours; callers get null when Firefox did not load it.

export function startupApi(browserApi) {
  const api = browserApi?.aboutStartup;
  return typeof api?.getStartupInfo === "function" ? api : null;
}
