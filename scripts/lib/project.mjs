// Names and paths shared by the scripts and the end-to-end tests.
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const EXTENSION_DIR = path.join(ROOT, "extension");
export const DIST_DIR = path.join(ROOT, "dist");
export const HOST_MANIFEST_PATH = path.join(ROOT, "native-host", "Cargo.toml");
export const HOST_BINARY = path.join(ROOT, "native-host", "target", "release", "about-startup-host");
export const EXTENSION_ID = "about-startup@startup-lab.dev";
export const HOST_NAME = "about_startup";
export const FLAVOURS = ["full", "basic"];
