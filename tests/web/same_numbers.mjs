// Same numbers: every configuration below runs through the native kvplan binary and through the
// WebAssembly module (build-wasm/web, under node), and what each printed must be identical: the
// JSON document byte for byte (kvplan_version aside, the one field a build may change), the exit
// code and the error line. Catalog models x GPUs x engines with their dtypes, a config.json
// folder, a GGUF file (read by the module through the page's growing slices), and bad inputs.
//
//   node tests/web/same_numbers.mjs --web build-wasm/web --kvplan build/kvplan
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";

import {writeLlamaGguf} from "./gguf.mjs";
import {copyIntoModule, fileAsBlob, loadKvplan} from "./kvplan-wasm.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const webDir = path.resolve(root, option("--web", "build-wasm/web"));
const binary = path.resolve(root, option("--kvplan", "build/kvplan"));

const MODELS = ["llama3.1-8b", "qwen3-8b", "gemma3-27b", "llama3.1-70b", "mistral-7b", "gpt-oss-20b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3"];
const GPUS = ["4090", "h100", "2x4090"];
// Each engine with its own cache dtypes and context flags, as a user would type them.
const ENGINES = [
  ["--ctx", "8k,32k,128k", "--kv-dtype", "fp16,fp8,int4"],
  ["--runtime", "vllm", "--max-model-len", "32k", "--kv-dtype", "auto,fp8"],
  ["--runtime", "llama.cpp", "-c", "32768", "-np", "2", "--kv-dtype", "f16,q8_0"],
  ["--runtime", "sglang", "--context-length", "16k", "--kv-dtype", "auto,fp8_e4m3"],
  ["--runtime", "trtllm", "--max_seq_len", "16k", "--kv-dtype", "auto,fp8"],
  ["--runtime", "ollama", "--num-ctx", "16384", "--kv-dtype", "f16,q8_0"],
];

function configurations(gguf) {
  const list = [];
  for (const model of MODELS) for (const gpu of GPUS) for (const engine of ENGINES) list.push(["--model", model, "--gpu", gpu, ...engine]);
  // A config.json folder (with its safetensors index) and a config.json file.
  for (const engine of ENGINES) list.push(["--model", "tests/fixtures/hf/qwen3-8b", "--gpu", "24GiB", ...engine]);
  for (const engine of ENGINES) list.push(["--model", "tests/fixtures/hf/gemma3-27b/config.json", "--gpu", "h100", ...engine]);
  // The GGUF, a multi-GiB sparse file: the module reads only its header.
  for (const engine of ENGINES) list.push(["--model", gguf, "--gpu", "4090", ...engine]);
  // Budgets, used memory, batches, weight formats and mixed cards.
  list.push(["--model", "llama3.1-8b", "--gpu", "4090", "--used", "2GiB", "--ctx", "32k,64k"]);
  list.push(["--model", "llama3.1-8b", "--gpu", "4090", "--budget", "20GiB", "--ctx", "32k", "--batch", "4"]);
  list.push(["--model", "llama3.1-70b", "--gpu", "h100", "--gpus", "4", "--weight-dtype", "fp8", "--ctx", "128k"]);
  list.push(["--model", "llama3.1-70b", "--gpu", "5090+3090", "--runtime", "llama.cpp", "-c", "8192", "--weight-dtype", "q4_k_m"]);
  list.push(["max", "--model", "qwen3-8b", "--gpu", "24GB", "--util", "0.9", "--ctx", "4700", "--batch", "8", "--kv-dtype", "fp16,fp8"]);
  list.push(["fit", "--gpu", "4090", "--ctx", "16k", "--top", "10"]);
  list.push(["advise", "--model", "llama3.1-8b", "--gpus", "4090,l40s,h100", "--ctx", "32k", "--batch", "4", "--runtime", "vllm"]);
  // Bad input: the same one-line message and exit code.
  list.push(["--model", "llama3.1-8x", "--gpu", "4090"]);
  list.push(["--model", "llama3.1-8b", "--gpu", "4091"]);
  list.push(["--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "12q"]);
  list.push(["--model", "llama3.1-8b", "--gpu", "4090", "--used", "3"]);
  list.push(["--model", "llama3.1-8b", "--gpu", "4090", "--runtime", "vlm"]);
  list.push(["--model", "tests/fixtures/hf/missing/config.json", "--gpu", "4090"]);
  return list;
}

/// The document without the version line, the one field two builds of one tree may differ in.
const comparable = (text) => text.replace(/^ {2}"kvplan_version": "[^"]*",\n/m, "");

async function main() {
  for (const file of [binary, path.join(webDir, "kvplan.js"), path.join(webDir, "kvplan.wasm")]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: build the release and wasm presets first`);
  }
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "kvplan-web-"));
  const ggufPath = path.join(temp, "llama-3.1-8b-q4_k_m.gguf");
  const {fileBytes} = writeLlamaGguf(ggufPath);

  const {kvplan} = await loadKvplan(webDir);
  copyIntoModule(kvplan, root, "tests/fixtures/hf/qwen3-8b");
  copyIntoModule(kvplan, root, "tests/fixtures/hf/gemma3-27b");
  const moduleGguf = await kvplan.addFile(fileAsBlob(ggufPath));

  let failures = 0;
  let count = 0;
  for (const words of configurations(ggufPath)) {
    const asJson = ["max", "fit", "advise"].includes(words[0]) || !words.includes("--format") ? [...words, "--format", "json"] : words;
    for (const run of [asJson, words]) {  // the JSON document and the table text
      count += 1;
      const native = spawnSync(binary, run, {cwd: root, encoding: "utf8", env: {PATH: "/usr/bin:/bin"}, maxBuffer: 256 << 20});
      if (native.error || native.status === null) throw new Error(`kvplan ${run.join(" ")} did not run: ${native.error || native.signal}`);
      if (process.env.KVPLAN_WEB_TRACE) console.log(`run: ${run.join(" ")}`);
      let inModule;
      try {
        inModule = await kvplan.run(run.map((w) => (w === ggufPath ? moduleGguf : w)));
      } catch (error) {  // a trap in the module: a failure, and the module is not to be trusted after it
        console.log(`CRASHED: kvplan ${run.join(" ")}: ${error.message}`);
        process.exit(1);
      }
      // The GGUF's path is the only text that differs: the module's copy lives in /uploads.
      const moduleOut = inModule.out.split(moduleGguf).join(ggufPath);
      const moduleErr = inModule.err.split(moduleGguf).join(ggufPath);
      const same = native.status === inModule.code && comparable(native.stdout) === comparable(moduleOut) && native.stderr === moduleErr;
      if (!same) {
        failures += 1;
        console.log(`DIFFERS: kvplan ${run.join(" ")}`);
        console.log(`  native exit ${native.status}, module exit ${inModule.code}`);
        const a = comparable(native.stdout).split("\n");
        const b = comparable(moduleOut).split("\n");
        const line = a.findIndex((text, i) => text !== b[i]);
        if (line >= 0) console.log(`  stdout line ${line + 1}:\n    native: ${a[line]}\n    module: ${b[line]}`);
        if (native.stderr !== moduleErr) console.log(`  stderr:\n    native: ${native.stderr.trim()}\n    module: ${moduleErr.trim()}`);
      }
    }
  }
  const slice = kvplan.slices.get(moduleGguf);
  console.log(`same numbers: ${count - failures} of ${count} runs identical (${count / 2} configurations, JSON and table); ` +
    `the ${fileBytes} byte GGUF read through a ${slice.cached} byte prefix`);
  if (slice.cached >= Number(fileBytes)) { console.log("the GGUF was read whole"); failures += 1; }
  fs.rmSync(temp, {recursive: true, force: true});
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(`same_numbers: ${error.stack || error}`);
  process.exit(2);
});
