// kvplan's WebAssembly module as a small API, shared by the page and the node tests:
// run(words) is `kvplan WORDS...` (the CLI's run_cli), and dropped files go into the module's
// in-memory file system, to be passed by path as the CLI would take them. A GGUF file is never
// read whole: only a growing prefix of it, until kvplan has parsed its header.
(function (root) {
  "use strict";

  const MiB = 1024 * 1024;
  const FIRST_SLICE = 1 * MiB;
  // A GGUF header (metadata and tensor infos, the tokenizer's vocabulary included) past this is
  // refused: the data that follows it is never needed.
  const LAST_SLICE = 512 * MiB;
  const JSON_LIMIT = 64 * MiB;  // config.json, a safetensors index, a spec file
  const UPLOADS = "/uploads";

  class Kvplan {
    constructor(module) {
      this.module = module;
      this.call = module.cwrap("kvplan_web_run", "number", ["string"]);
      this.out = module.cwrap("kvplan_web_out", "number", []);
      this.err = module.cwrap("kvplan_web_err", "number", []);
      this.slices = new Map();  // path -> {blob, cached, short}
      module.FS.mkdir(UPLOADS);
    }

    /// createKvplan is the Emscripten factory (kvplan.js); options go to it (wasmBinary under node).
    static async load(createKvplan, options) {
      const settings = Object.assign({print: () => {}, printErr: () => {}}, options || {});
      return new Kvplan(await createKvplan(settings));
    }

    /// `kvplan WORDS...`: {code, out, err} exactly as the CLI prints them.
    runOnce(words) {
      const code = this.call(JSON.stringify(words));
      return {code, out: this.module.UTF8ToString(this.out()), err: this.module.UTF8ToString(this.err())};
    }

    /// Runs, and while a GGUF prefix was too short for kvplan to parse its header, reads a prefix
    /// four times longer and runs again.
    async run(words) {
      for (;;) {
        for (const slice of this.slices.values()) slice.short = false;
        const result = this.runOnce(words);
        if (result.code === 0 || result.code === 1) return result;
        const short = [...this.slices.values()].filter((s) => s.short && s.cached < s.blob.size);
        if (short.length === 0) return result;
        for (const slice of short) {
          if (slice.cached >= LAST_SLICE) {
            return {code: 2, out: "", err: `kvplan: error: ${slice.name}: the GGUF header is longer than ${LAST_SLICE / MiB} MiB, more than the page reads\n`};
          }
          await this.readPrefix(slice, Math.min(slice.cached * 4, LAST_SLICE, slice.blob.size));
        }
      }
    }

    /// Puts a File (or any Blob with a name) into the in-memory file system; returns its path.
    async addFile(file, name) {
      const fileName = (name || file.name || "model").replace(/[\/\\]/g, "_");
      const path = `${UPLOADS}/${fileName}`;
      this.removeFile(path);
      if (/\.gguf$/i.test(fileName)) {
        const slice = {blob: file, name: fileName, path, cached: 0, short: false};
        this.slices.set(path, slice);
        this.mountSliced(slice);
        await this.readPrefix(slice, Math.min(FIRST_SLICE, file.size));
        return path;
      }
      if (file.size > JSON_LIMIT) throw new Error(`${fileName} is ${file.size} bytes: a config.json or index is a few KiB`);
      this.module.FS.writeFile(path, new Uint8Array(await file.arrayBuffer()));
      return path;
    }

    removeFile(path) {
      this.slices.delete(path);
      try { this.module.FS.unlink(path); } catch (e) { /* not there */ }
    }

    // A file whose size is the whole Blob's but whose bytes are only a prefix of it: kvplan checks
    // every tensor against the file size, then reads only the header. A read past the prefix
    // marks the slice short, and run() reads more.
    mountSliced(slice) {
      const FS = this.module.FS;
      FS.writeFile(slice.path, new Uint8Array(0));
      const node = FS.lookupPath(slice.path).node;
      const nodeOps = node.node_ops;
      const streamOps = node.stream_ops;
      node.node_ops = Object.assign({}, nodeOps, {
        getattr(n) {
          const attr = nodeOps.getattr(n);
          attr.size = slice.blob.size;
          return attr;
        },
      });
      node.stream_ops = Object.assign({}, streamOps, {
        read(stream, buffer, offset, length, position) {
          if (position + length > stream.node.usedBytes && stream.node.usedBytes < slice.blob.size) slice.short = true;
          return streamOps.read(stream, buffer, offset, length, position);
        },
      });
      slice.node = node;
    }

    async readPrefix(slice, bytes) {
      const data = new Uint8Array(await slice.blob.slice(0, bytes).arrayBuffer());
      const node = slice.node;
      node.contents = data;
      node.usedBytes = data.length;
      slice.cached = data.length;
    }
  }

  /// JSON text with every integer too long for a JavaScript number kept as its digits (a string):
  /// byte counts past 2^53 stay exact.
  function parseExactJson(text) {
    let quoted = "";
    let i = 0;
    let inString = false;
    while (i < text.length) {
      const c = text[i];
      if (inString) {
        quoted += c;
        if (c === "\\") { quoted += text[i + 1]; i += 2; continue; }
        if (c === '"') inString = false;
        i += 1;
        continue;
      }
      if (c === '"') { inString = true; quoted += c; i += 1; continue; }
      if (c === "-" || (c >= "0" && c <= "9")) {
        let j = i + 1;
        while (j < text.length && /[0-9eE.+\-]/.test(text[j])) j += 1;
        const number = text.slice(i, j);
        quoted += /^-?\d{16,}$/.test(number) ? `"${number}"` : number;
        i = j;
        continue;
      }
      quoted += c;
      i += 1;
    }
    return JSON.parse(quoted);
  }

  const api = {Kvplan, parseExactJson};
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.KvplanApi = api;
})(typeof globalThis !== "undefined" ? globalThis : this);
