// The benchmark's --profile-preset: the realistic profile (scripts/profile/make.mjs) made once
// per run, and what the results say of the profile their launches started on.
import fs from "node:fs";
import path from "node:path";
import { makeProfile } from "../profile/make.mjs";

/**
 * With --profile-preset: the realistic profile made into the run's folder (scripts/profile/make.mjs,
 * history up to today), and what it holds for the results. Null without.
 */
export async function presetProfile(options, { root, firefox }) {
  if (!options.profilePreset) {
    return null;
  }
  const today = new Date();
  const now = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  if (options.profileMade) {
    console.log(`taking the ${options.profilePreset} profile (seed ${options.profileSeed}) made in ${options.profileMade}`);
    return madeProfile(options, now);
  }
  console.log(`making the ${options.profilePreset} profile (seed ${options.profileSeed}) with this Firefox …`);
  const made = await makeProfile(
    { presetName: options.profilePreset, seed: options.profileSeed, now, out: path.join(root, "preset"), firefox: firefox.binary },
    { log: (line) => console.log(`  ${line.replace(/\n/g, "\n  ")}`) },
  );
  return made;
}

/**
 * With --profile-made DIR: the profile scripts/profile/make.mjs made in DIR (its profile.json),
 * when it is the asked preset and seed with history up to `now` (today); else a clear error.
 */
export function madeProfile({ profileMade, profilePreset, profileSeed }, now, { fsApi = fs } = {}) {
  const file = path.join(profileMade, "profile.json");
  let made;
  try {
    made = JSON.parse(fsApi.readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`--profile-made: cannot read ${file} (${error.code ?? error.message}): make it with node scripts/profile/make.mjs --preset ${profilePreset} --out ${profileMade}`, { cause: error });
  }
  const wrong = [
    made.preset !== profilePreset && `its preset is ${made.preset}, not ${profilePreset}`,
    made.seed !== profileSeed && `its seed is ${made.seed}, not ${profileSeed}`,
    made.now !== new Date(now).toISOString().slice(0, 10) && `its history ends ${made.now}, not today`,
  ].filter(Boolean);
  if (wrong.length > 0) {
    throw new Error(`--profile-made: ${file}: ${wrong.join("; ")}: make it again or drop --profile-made`);
  }
  return made;
}

/** What the results say of the profile: the preset and what it holds, or "fresh". Pure. */
export function profileMeta(made) {
  if (!made) {
    return { preset: "fresh", description: "a fresh profile (no --profile-preset): one start behind it, nothing else" };
  }
  const c = made.counts;
  return {
    preset: made.preset,
    seed: made.seed,
    historyTo: made.now,
    counts: c,
    bytes: made.parts.total,
    parts: made.parts.parts.map(({ part, bytes, files }) => ({ part, bytes, files })),
    madeSeconds: made.seconds.total,
    description: `preset ${made.preset} (seed ${made.seed}): ${c.visits.toLocaleString("en-US")} visits to ${c.places.toLocaleString("en-US")} pages, ${c.bookmarks} bookmarks, ${c.tabs} tabs in ${c.windows} window(s), ${c.extensions} add-ons; ${(made.parts.total / 1e6).toFixed(0)} MB`,
  };
}

