// Loads build-wasm/web/kvplan.js + kvplan.wasm under node through the page's own API
// (kvplan-api.js), the wasm binary read from disk: the generated loader would try to fetch() a
// file path under node 18+.
import fs from "node:fs";
import path from "node:path";
import {createRequire} from "node:module";

const require = createRequire(import.meta.url);

export async function loadKvplan(webDir) {
  const createKvplan = require(path.resolve(webDir, "kvplan.js"));
  const {Kvplan, parseExactJson} = require(path.resolve(webDir, "kvplan-api.js"));
  const wasmBinary = fs.readFileSync(path.resolve(webDir, "kvplan.wasm"));
  return {kvplan: await Kvplan.load(createKvplan, {wasmBinary}), parseExactJson};
}

/// Copies a file or a folder's files of the repository into the module's file system at the same
/// relative path, so the CLI and the module read the same path and print the same text.
export function copyIntoModule(kvplan, sourceRoot, relative) {
  const FS = kvplan.module.FS;
  const full = path.join(sourceRoot, relative);
  const files = fs.statSync(full).isDirectory() ? fs.readdirSync(full).map((name) => path.join(relative, name)) : [relative];
  for (const file of files) {
    if (!fs.statSync(path.join(sourceRoot, file)).isFile()) continue;
    FS.mkdirTree(path.dirname(`/${file}`));
    FS.writeFile(`/${file}`, fs.readFileSync(path.join(sourceRoot, file)));
  }
}
