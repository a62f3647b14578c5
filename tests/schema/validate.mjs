// Validates kvplan's real output and its catalog files against the JSON Schemas in schema/.
// Usage: node validate.mjs <path-to-kvplan-binary> <repository-root>
// Prints one line per check and ends with "N passed, N failed"; exits 1 on any failure.

import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";

const [kvplan, root] = process.argv.slice(2);
if (!kvplan || !root) {
  console.error("usage: node validate.mjs <kvplan binary> <repository root>");
  process.exit(2);
}

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
const loadSchema = (name) => JSON.parse(readFileSync(join(root, "schema", name), "utf8"));
const validateOutput = ajv.compile(loadSchema("output.schema.json"));
const validateSpec = ajv.compile(loadSchema("model-spec.schema.json"));
const validateMax = ajv.compile(loadSchema("max.schema.json"));  // refers to output.schema.json's row
const validateFit = ajv.compile(loadSchema("fit.schema.json"));  // refers to output.schema.json's row
const validateExplain = ajv.compile(loadSchema("explain.schema.json"));

let passed = 0;
let failed = 0;
function check(label, validate, document) {
  if (validate(document)) {
    passed++;
    console.log(`ok      ${label}`);
  } else {
    failed++;
    console.log(`FAILED  ${label}: ${ajv.errorsText(validate.errors)}`);
  }
}

// Real output of the commands the README shows, plus ones that exercise every optional field.
const commands = [
  ["--model", "llama3.1-8b", "--ctx", "128k", "--gpu", "4090"],
  ["--model", "llama3.1-8b", "--ctx", "32k,64k,128k", "--gpu", "4090", "--kv-dtype", "fp16,fp8"],
  ["--model", "qwen3-8b", "--ctx", "100000", "--gpu", "24GiB", "--kv-dtype", "fp16,fp8,int4"],
  ["--model", join(root, "tests/fixtures/specs/my-model.json"), "--ctx", "8k", "--batch", "16", "--gpu", "h100", "--weight-dtype", "fp8"],
  ["--model", "llama3.1-70b", "--ctx", "1M", "--gpu", "4090", "--kv-dtype", "q8_0,q4_0,auto", "--util", "0.9", "--overhead", "0"],
  ["--runtime", "llama.cpp", "--model", "qwen3-8b", "-c", "32768", "-np", "4", "-ctk", "q8_0", "-ctv", "q8_0", "--gpu", "4090"],
  ["--runtime", "vllm", "--model", "llama3.1-70b", "--gpu", "h100", "-tp", "4", "--max-model-len", "32k,1M", "--kv-cache-dtype", "auto,fp8"],
  ["--runtime", "vllm", "--model", "gemma3-12b", "--gpu", "h100", "--ctx", "8k", "--kv-cache-memory", "47.72GiB", "--vllm-version", "0.19"],
  ["--runtime", "vllm", "--model", "qwen3.5-35b-a3b", "--gpu", "rtx5090", "--ctx", "128k", "--kv-cache-dtype", "fp8", "--enable-prefix-caching"],
  // The 2026 kinds: KV-shared layers, a DSA indexer with an MTP layer counted, recurrent state.
  ["--model", "gemma4-e2b", "--ctx", "32k", "--gpu", "4090"],
  ["--model", "glm5.2", "--ctx", "128k", "--gpu", "h200", "--mtp-layers", "1"],
  ["--model", "qwen3.5-27b", "--ctx", "256k", "--gpu", "h100", "--batch", "4"],
  // Verdicts and warnings: an ambiguous card, an engine refusal, a pool, several GPUs.
  ["--model", "llama3.1-8b", "--ctx", "128k", "--gpu", "a100", "--kv-dtype", "fp8"],
  ["--runtime", "vllm", "--model", "qwen3-8b", "--gpu", "h100", "--max-model-len", "128k"],
  ["--runtime", "vllm", "--model", "llama3.1-8b", "--gpu", "4090", "--max-model-len", "8k", "--kv-cache-memory", "30GiB"],
  ["--model", "llama3.1-70b", "--gpu", "4xh100", "--ctx", "32k"],
  ["--runtime", "vllm", "--model", "llama3.1-70b", "--gpu", "h100", "--gpus", "2", "--ctx", "32k"],
  ["--runtime", "vllm", "--model", "llama3.1-70b", "--gpu", "4xh100", "-tp", "2", "-pp", "2", "--ctx", "32k"],
  ["--runtime", "vllm", "--model", "gemma2-9b", "--gpu", "h100", "--max-model-len", "8k", "--dtype", "float32"],
  // SGLang: a pool from given free memory, TP x PP, hybrid SWA, a Mamba pool, DSA, a refusal, a dtype it lacks.
  ["--runtime", "sglang", "--model", "llama3.1-8b", "--gpu", "h100", "--ctx", "8k,32k", "--mem-fraction-static", "0.835",
   "--sglang-free-before-load", "78.5GiB", "--sglang-free-after-load", "63.46GiB", "--batch", "8"],
  ["--runtime", "sglang", "--model", "llama3.1-70b", "--gpu", "4xh100", "--pp-size", "2", "--context-length", "32k"],
  ["--runtime", "sglang", "--model", "gemma3-12b", "--gpu", "h100", "--ctx", "32k", "--sglang-version", "0.5.5"],
  ["--runtime", "sglang", "--model", "qwen3-next-80b-a3b", "--gpu", "b200", "--ctx", "32k"],
  ["--runtime", "sglang", "--model", "deepseek-v3.2", "--gpu", "8xb200", "--ctx", "32k", "--attention-backend", "trtllm_mla"],
  ["--runtime", "sglang", "--model", "llama3.1-70b", "--gpu", "h100", "--ctx", "8k", "--kv-dtype", "auto,int8"],
  // TensorRT-LLM: T1's rules, TP, VSWA, the TensorRT-engine path, a dtype it lacks on the card.
  ["--runtime", "trtllm", "--model", "llama3.1-8b", "--gpu", "h100", "--kv-dtype", "fp8", "--max_seq_len", "157",
   "--kv_cache_free_gpu_memory_fraction", "0.8", "--trtllm-version", "0.20.0", "--max_tokens", "860308"],
  ["--runtime", "trtllm", "--model", "llama3.1-70b", "--gpu", "4xh100", "--ctx", "32k,128k", "--batch", "4"],
  ["--runtime", "trtllm", "--model", "gemma3-12b", "--gpu", "h100", "--ctx", "8k", "--max_attention_window",
   "1024,1024,1024,1024,1024,8192"],
  ["--runtime", "trtllm", "--model", "qwen2.5-7b", "--gpu", "a100-40g", "--ctx", "4k", "--trtllm-version", "0.13",
   "--trtllm-free-memory", "21.89GiB", "--kv-dtype", "fp16"],
  ["--runtime", "trtllm", "--model", "llama3.1-8b", "--gpu", "h100", "--ctx", "8k", "--kv-dtype", "fp8,nvfp4"],
  // Ollama: a tag that fits, one that spills to system RAM (E4), an E1 estimate with a quantized
  // cache, and llama.cpp's layer split over mixed cards.
  ["--runtime", "ollama", "--model", "llama3.1:8b", "--gpu", "4090", "--num-ctx", "8192,32768"],
  ["--runtime", "ollama", "--model", "llama3.1:70b", "--gpu", "4090"],
  ["--runtime", "ollama", "--model", "llama3.1:70b", "--gpu", "4090", "--ctx", "8k", "--ram", "16GiB", "--ollama-version", "0.13.5", "--speed"],
  ["--runtime", "llama.cpp", "--model", "llama3.1-70b", "--gpu", "4090", "--ctx", "8k", "--ram", "128GiB", "--speed"],
  ["--runtime", "ollama", "--model", "gemma3:12b", "--gpu", "3060", "--ollama-version", "0.9.0", "--kv-cache-type", "q8_0", "--flash-attention", "1"],
  ["--runtime", "ollama", "--model", "qwen3:32b", "--gpu", "2x3090", "--ollama-version", "0.20.0"],
  ["--runtime", "llama.cpp", "--model", "llama3.1:70b", "-c", "32768", "--gpu", "5090+3090", "-ts", "3,1"],
];
for (const args of commands) {
  const text = execFileSync(kvplan, [...args, "--format", "json"], { encoding: "utf8" });
  check(`kvplan ${args.join(" ")}`, validateOutput, JSON.parse(text));
}

// kvplan max: the generic profile, vLLM, a pipeline-stage engine, llama.cpp's slots, a MIG instance.
const maxCommands = [
  ["max", "--model", "qwen3-8b", "--gpu", "24GB", "--util", "0.9", "--overhead", "0", "--ctx", "4700", "--batch", "8"],
  ["max", "--model", "qwen3-8b", "--gpu", "4090", "--runtime", "vllm", "--ctx", "4700"],
  ["max", "--model", "llama3.1-70b", "--gpu", "h100", "--runtime", "sglang", "--ctx", "32k"],
  ["max", "--model", "llama3.1-70b", "--gpu", "4090", "--runtime", "llama.cpp", "--ctx", "8k", "--ram", "128GiB"],
  ["max", "--model", "llama3.1-8b", "--gpu", "4090", "--runtime", "llama.cpp", "-np", "4", "--ctx", "8k"],
  ["max", "--model", "qwen3-8b", "--gpu", "h100-1g.10gb", "--kv-dtype", "fp8"],
];
for (const args of maxCommands) {
  const text = execFileSync(kvplan, [...args, "--format", "json"], { encoding: "utf8" });
  check(`kvplan ${args.join(" ")}`, validateMax, JSON.parse(text));
}

// kvplan fit: the generic profile, llama.cpp's GGUF formats, vLLM, a filter that leaves rows rejected.
const fitCommands = [
  ["fit", "--gpu", "4090", "--ctx", "32k"],
  ["fit", "--gpu", "4090", "--runtime", "llama.cpp", "--ctx", "16k", "--family", "qwen"],
  ["fit", "--gpu", "4090", "--runtime", "ollama", "--ctx", "8k", "--family", "llama3.1", "--ram", "64GiB"],
  ["fit", "--gpu", "h100", "--runtime", "vllm", "--ctx", "32k", "--quality", "fp8"],
  ["fit", "--gpu", "24GiB", "--ctx", "8k", "--batch", "4", "--min-params", "7B", "--all"],
];
for (const args of fitCommands) {
  const text = execFileSync(kvplan, [...args, "--format", "json"], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  check(`kvplan ${args.join(" ")}`, validateFit, JSON.parse(text));
}

// kvplan explain: real logs of vLLM, llama.cpp, SGLang and Ollama compared with the plan (every agreement
// kind among them), one without a model kvplan knows, and vLLM's /metrics alone.
const logs = join(root, "tests/fixtures/logs");
const explainCommands = [
  ["explain", join(logs, "vllm-0.19-llama3.1-8b-h100.log"), "--gpu", "h100"],
  ["explain", join(logs, "vllm-0.10-qwen2-7b-a100-wrapped.log"), "--model", "qwen2.5-7b", "--gpu", "a100-80g"],
  ["explain", join(logs, "vllm-0.10-qwen2-7b-a100-wrapped.log")],
  ["explain", join(logs, "llama-server-b6699-gpt-oss-20b-rtx3070.log")],
  ["explain", join(logs, "sglang-docs-llama3.1-8b.log"), "--gpu", "h100"],
  ["explain", join(logs, "sglang-2025-07-llama3.1-8b-24gb.log"), "--model", "llama3.1-8b", "--gpu", "4090"],
  ["explain", join(logs, "sglang-S4-tp-ranks.log")],
  ["explain", join(logs, "vllm-metrics-cache-config-info.txt")],
  ["explain", join(logs, "ollama-O5-rocm-runner.log"), "--model", "qwen2.5:72b-q4_K_S"],
  ["explain", join(logs, "ollama-O1-4gpu-flash-attn.log"), "--model", "llama3.3:70b-q8_0"],
  ["explain", join(logs, "ollama-O2-offload-runner.log")],
];
for (const args of explainCommands) {
  const text = execFileSync(kvplan, [...args, "--format", "json"], { encoding: "utf8" });
  check(`kvplan ${args.join(" ")}`, validateExplain, JSON.parse(text));
}

for (const file of readdirSync(join(root, "models")).filter((name) => name.endsWith(".json")).sort()) {
  check(`models/${file}`, validateSpec, JSON.parse(readFileSync(join(root, "models", file), "utf8")));
}
const specs = JSON.parse(execFileSync(kvplan, ["models", "--format", "json"], { encoding: "utf8" }));
for (const spec of specs.models) check(`kvplan models --format json: ${spec.id}`, validateSpec, spec);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
