// Seeded randomness for the realistic profile (scripts/profile/make.mjs). Everything a profile
// holds is drawn from one of these, so the same seed and preset give the same profile. The
// generator is pure-rand's xoroshiro128+; the helpers below only shape its draws. Pure.
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

/**
 * A stream of draws from `seed` (an integer) and a `label`: each part of the model (history,
 * cookies, the session…) has its own stream, so adding draws to one part does not shift the
 * others.
 */
export function stream(seed, label) {
  let mixed = seed >>> 0;
  for (const char of label) {
    // FNV-1a over the label, folded into the seed: a distinct, stable start per part.
    mixed = Math.imul(mixed ^ char.codePointAt(0), 16777619) >>> 0;
  }
  const rng = xoroshiro128plus(mixed);
  const r = {
    /** A float in [0, 1). */
    float: () => uniformFloat64(rng),
    /** An integer in [min, max], both included. */
    int: (min, max) => uniformInt(rng, min, max),
    /** One element of a non-empty array. */
    pick: (items) => items[uniformInt(rng, 0, items.length - 1)],
    /** True with probability p. */
    chance: (p) => uniformFloat64(rng) < p,
    /** An index drawn by `weights` (see zipfWeights); cumulative sums are made once per array. */
    weighted(weights) {
      const cumulative = cumulativeOf(weights);
      const x = uniformFloat64(rng) * cumulative[cumulative.length - 1];
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid] > x) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    },
    /** `length` characters of [a-z0-9]. */
    token(length) {
      let text = "";
      for (let i = 0; i < length; i++) text += ALNUM[uniformInt(rng, 0, ALNUM.length - 1)];
      return text;
    },
    /** A Places GUID: 12 characters of base64url, as Firefox makes them. */
    guid() {
      let text = "";
      for (let i = 0; i < 12; i++) text += BASE64URL[uniformInt(rng, 0, 63)];
      return text;
    },
    /** A version-4-shaped UUID (for the add-ons' pinned internal UUIDs). */
    uuid() {
      const hex = Array.from({ length: 32 }, () => HEX[uniformInt(rng, 0, 15)]);
      hex[12] = "4";
      hex[16] = HEX[8 + uniformInt(rng, 0, 3)];
      const h = hex.join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
    /** `count` words of the vocabulary, space-separated. */
    words(count) {
      return Array.from({ length: count }, () => WORDS[uniformInt(rng, 0, WORDS.length - 1)]).join(" ");
    },
  };
  return r;
}

const cumulativeCache = new WeakMap();
function cumulativeOf(weights) {
  let cumulative = cumulativeCache.get(weights);
  if (!cumulative) {
    cumulative = new Float64Array(weights.length);
    let sum = 0;
    weights.forEach((w, i) => {
      sum += w;
      cumulative[i] = sum;
    });
    cumulativeCache.set(weights, cumulative);
  }
  return cumulative;
}

/**
 * Zipf weights 1/rank^s for `n` ranks: a few sites get most visits (Adamic & Huberman, "Zipf's
 * law and the Internet", Glottometrics 3, 2002; the exponent 1 is assumed).
 */
export function zipfWeights(n, s = 1) {
  return Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s);
}

const ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Plain words for titles, paths, page text and add-on data: text compresses as real text does. */
export const WORDS = `the of and to in is for on with as by at from that this be are or an it was
not have has new more all can will about your one how what which their time page news blog home
search help update review guide open video music photo map world local city weather sports game
market price store shop cart order account login settings profile report data cloud code docs
project issue release version build test server client browser linux kernel memory disk file
cache start fast slow light dark green blue red river mountain garden kitchen travel hotel
flight train school library science health energy history future design style recipe coffee
tea book film series season episode forum thread comment reply share friend family team office
work meeting calendar email message chat call phone tablet laptop screen window tab bookmark`
  .split(/\s+/)
  .filter(Boolean);
