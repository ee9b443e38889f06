import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { DEFAULT_LOCALE, fileTranslator, localeCandidates, translator } from "../../../extension/lib/i18n.js";

const MANIFEST = JSON.parse(fs.readFileSync(new URL("../../../extension/manifest.json", import.meta.url), "utf8"));

test("the default locale is the manifest's", () => {
  assert.equal(DEFAULT_LOCALE, MANIFEST.default_locale);
});

test("translator: the message, else the key itself", () => {
  const t = translator((key) => ({ a: "Alpha" })[key] ?? "");
  assert.equal(t("a"), "Alpha");
  assert.equal(t("missing"), "missing");
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
    JSON.parse(fs.readFileSync(new URL(`../../../extension/_locales/${locale}/messages.json`, import.meta.url), "utf8"));
  const t = await fileTranslator(load, ["en-GB"]);
  assert.match(t("noApiExplanation"), /private windows/);
  assert.match(t("noApiHowTo"), /Run in Private Windows/);
});
