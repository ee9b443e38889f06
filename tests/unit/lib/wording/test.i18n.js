import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { DEFAULT_LOCALE, fileTranslator, localeCandidates, plural, translator } from "../../../../extension/lib/wording/i18n.js";

const MANIFEST = JSON.parse(fs.readFileSync(new URL("../../../../extension/manifest.json", import.meta.url), "utf8"));

test("the default locale is the manifest's", () => {
  assert.equal(DEFAULT_LOCALE, MANIFEST.default_locale);
});

test("translator: the message, else the key itself", () => {
  const t = translator((key) => ({ a: "Alpha" })[key] ?? "");
  assert.equal(t("a"), "Alpha");
  assert.equal(t("missing"), "missing");
});

test("plural: the One form for one, the other form for the rest, by the messages' language", () => {
  const messages = {
    messagesLanguage: "en",
    files: "$1 files",
    filesOne: "$1 file",
    onlyOther: "$1 things",
  };
  const t = translator((key, subs) => (messages[key] ?? "").replace("$1", subs?.[0] ?? ""));
  const tn = plural(t);
  assert.equal(tn("files", 1), "1 file");
  assert.equal(tn("files", 0), "0 files");
  assert.equal(tn("files", 2), "2 files");
  assert.equal(tn("files", 1, ["one"]), "one file", "the substitutions are the caller's when given");
  assert.equal(tn("onlyOther", 1), "1 things", "a missing One form falls back to the other form");
  assert.equal(tn("missing", 1), "missing", "a missing key shows as itself, as with t");
  assert.equal(tn("files", Number.NaN, ["?"]), "? files", "a count that is no number takes the other form");
});

test("plural: other languages' categories, and the default locale's rules without a language", () => {
  const french = { messagesLanguage: "fr", n: "other", nOne: "one" };
  assert.equal(plural(translator((key) => french[key] ?? ""))("n", 0), "one", "French says 0 in the singular");
  const polish = { messagesLanguage: "pl", n: "other", nOne: "one", nFew: "few", nMany: "many" };
  const tnPl = plural(translator((key) => polish[key] ?? ""));
  assert.deepEqual([1, 2, 5, 22].map((n) => tnPl("n", n)), ["one", "few", "many", "few"]);
  const untagged = { n: "other", nOne: "one" };
  assert.equal(plural(translator((key) => untagged[key] ?? ""))("n", 0), "other", "English rules when the file names no language");
  const broken = { messagesLanguage: "not a tag!", n: "other", nOne: "one" };
  assert.equal(plural(translator((key) => broken[key] ?? ""))("n", 1), "one", "English rules when its tag is no language");
});

test("locale candidates: region then language, as browser.i18n falls back; default last", () => {
  assert.deepEqual(localeCandidates(["de-AT", "fr", "de"]), ["de_AT", "de", "fr", "en"]);
  assert.deepEqual(localeCandidates(["en-US"]), ["en_US", "en"]);
  assert.deepEqual(localeCandidates([]), ["en"]);
  assert.deepEqual(localeCandidates(undefined, "fr"), ["fr"]);
});

test("fileTranslator reads the first locale that has a file, and the default when none does", async () => {
  const files = { en: { hello: { message: "Hello" } }, de: { hello: { message: "Hallo" } } };
  const asked = [];
  const load = async (locale) => {
    asked.push(locale);
    if (!files[locale]) {
      throw new Error(`no ${locale}`);
    }
    return files[locale];
  };
  const german = await fileTranslator(load, ["de-AT"]);
  assert.equal(german("hello"), "Hallo");
  assert.deepEqual(asked, ["de_AT", "de"]);
  assert.equal(german("missing"), "missing", "a missing key shows as itself");

  const fallback = await fileTranslator(load, ["pt-BR"]);
  assert.equal(fallback("hello"), "Hello");

  const nothing = await fileTranslator(async () => Promise.reject(new Error("offline")), ["en"]);
  assert.equal(nothing("hello"), "hello");
});

test("fileTranslator over the real English file words the no-API explanation", async () => {
  const load = async (locale) =>
    JSON.parse(fs.readFileSync(new URL(`../../../../extension/_locales/${locale}/messages.json`, import.meta.url), "utf8"));
  const t = await fileTranslator(load, ["en-GB"]);
  assert.match(t("noApiExplanation"), /private windows/);
  assert.match(t("noApiHowTo"), /Run in Private Windows/);
});
