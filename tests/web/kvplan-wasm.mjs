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

/// A file on disk as the page sees a dropped File: its size, and slices read on demand. (node's
/// fs.openAsBlob reports a size modulo 2^32 for files past 4 GiB in node 20.)
export function fileAsBlob(file) {
  const size = fs.statSync(file).size;
  const sliceOf = (start, end) => ({
    size: end - start,
    async arrayBuffer() {
      const bytes = Buffer.alloc(end - start);
      const fd = fs.openSync(file, "r");
      try { fs.readSync(fd, bytes, 0, bytes.length, start); } finally { fs.closeSync(fd); }
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
    },
  });
  return {name: path.basename(file), size, slice: (start = 0, end = size) => sliceOf(start, Math.min(end, size))};
}
