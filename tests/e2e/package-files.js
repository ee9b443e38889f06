// Reading what the Debian package holds, for test.package.js: the listing `dpkg-deb -c` prints
// (mode, owner, path, link target) and a polkit policy file (parsed with fast-xml-parser after
// its validator accepts the whole file, so a broken file is an error, never a partial reading).
import { XMLParser, XMLValidator } from "fast-xml-parser";

/**
 * `dpkg-deb -c` output → [{mode, owner, path, target}], path without the leading "." and
 * trailing "/" ("/" for the root entry). A line in another form is an error, not skipped.
 */
export function parseDebListing(text) {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      // drwxr-xr-x root/root         0 2026-11-26 15:00 ./usr/
      // lrwxrwxrwx root/root         0 2026-11-26 15:00 ./usr/bin/x -> ../lib/x
      const match = /^([-dlpscb][-rwxsStT]{9}) (\S+)\s+\d+ \d{4}-\d\d-\d\d \d\d:\d\d \.(\/.*?)(?: -> (.+))?$/.exec(line);
      if (!match) {
        throw new Error(`not a line of dpkg-deb -c: ${JSON.stringify(line)}`);
      }
      const [, mode, owner, raw, target = null] = match;
      return { mode, owner, path: raw === "/" ? "/" : raw.replace(/\/$/, ""), target };
    });
}

/**
 * A polkit policy file → [{id, defaults: {allow_any, allow_inactive, allow_active}, annotations:
 * {key: value}}], one per <action>. Throws on XML that does not validate or a policy without
 * actions.
 */
export function parsePolicy(xml) {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new Error(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    // Always lists, so one action and several read the same way.
    isArray: (name) => ["action", "annotate"].includes(name),
    parseTagValue: false,
    trimValues: true,
  });
  const actions = parser.parse(xml).policyconfig?.action ?? [];
  if (actions.length === 0) {
    throw new Error("no <action> in the policy");
  }
  return actions.map((action) => ({
    id: action.id,
    defaults: { ...action.defaults },
    annotations: Object.fromEntries((action.annotate ?? []).map((a) => [a.key, a["#text"]])),
  }));
}
