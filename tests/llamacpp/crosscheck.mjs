#!/usr/bin/env node
// The llama.cpp cross-check: kvplan's llama.cpp profile against the real llama.cpp.
//
//   node crosscheck.mjs --kvplan build/kvplan --make-fixtures build/tests/make_gguf_fixtures \
//       [--work-dir DIR] [--only NAME[,NAME]] [--no-peer] [--verbose]
//
// 1. writes the fixture GGUF files (tests/support/llamacpp_fixtures.cpp: one tiny model per
//    architecture kvplan reads),
// 2. runs each through the real llama.cpp (run-llamacpp.mjs batch mode: node-llama-cpp 3.21.1 =
//    llama.cpp v0.4.0, CPU) at several context sizes (some not multiples of 256), 1 and 4 sequences,
//    and every K/V type pair of f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl (the 9 x 9 matrix at two
//    sizes, K = V at the others; flash attention on where V is quantized, off otherwise),
// 3. hands kvplan the settings llama.cpp was handed (n_ctx, sequences, n_batch = n_ubatch as
//    node-llama-cpp passes them: it raises the batch to 513 for sliding-window models) as
//    `llama-server -m F -ngl 0 -c ... -ctk ... -fa ...` command lines, a fixture's all in one
//    `kvplan check --format json` (and one of them as `kvplan --runtime llama.cpp ...` too, whose
//    document must equal check's), and asserts, per configuration: the context llama.cpp settled on
//    (n_ctx, n_ctx_seq, n_batch, n_ubatch) equal; per cache cells, layers and streams equal, K and V
//    within 0.005 MiB of llama.cpp's log line; recurrent cells, layers, R and S within 0.005 MiB;
//    all cache bytes together inside the exact range llama.cpp's memory breakdown gives (+-53 B);
//    the memory-mapped model buffer and the output buffer within 0.005 MiB. Where llama.cpp refuses
//    a configuration (a quantized V cache without flash attention; K != V types on an MLA model),
//    kvplan must refuse it too (an invalid deployment: exit 2), quoting llama.cpp's message.
// 4. prints one line per mismatch, and "N passed, N failed" last (exit 1 when any failed).
//
// Also, for information (never a failure): node-llama-cpp's own estimator (GgufInsights, what
// `npx node-llama-cpp inspect estimate` uses) on the same files, and where it differs from the engine.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;
const TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"];
const quantized = (t) => !["f32", "f16", "bf16"].includes(t);
const SWA = new Set(["exaone-moe", "afmoe", "laguna", "smallthinker", "mellum", "mimo2", "mimo2-nextn", "step35", "cohere2moe", "granite_swa", "plamo3", "gemma2", "gemma3", "gemma3-allswa", "lfm2-swa", "gpt-oss", "llama4", "gemma3n", "cohere2", "olmo2-swa", "exaone4-64", "gemma4", "muse-glimmer", "dots3note", "deepseek4"]);
// Architectures whose only new part is how llama.cpp reads their hparams: the type matrix would
// re-run cache code another fixture already runs through it (llama's plain cache; qwen3next's
// hybrid for qwen35 and qwen35moe; gemma3n's sliding and shared caches for gemma4; deepseek2's
// K-only MLA rows and qwen3next's f32 state, which no cache type changes, for kimi-linear; deepseek2's
// K rows for deepseek32's and glm-dsa's indexer cache, a K-only row at the K type like MLA's), so
// they get the short list (lightConfigsFor).
const LIGHT = new Set(["gemma4", "kimi-linear", "deepseek32", "glm-dsa", "glm-dsa-table", "qwen2moe", "granitemoe", "hunyuan-dense", "dots1", "bailingmoe", "apertus", "arcee", "qwen35", "qwen35moe",
    // llama_kv_cache_dsa_iswa: DSA's two caches on the full layers beside a K-only sliding cache
    "dots3note"]);
// Architectures added since, each on cache code a fixture above already runs through the matrix,
// so what is new is only that llama.cpp loads them, reads their keys and applies their layer
// rules: 8 configurations each (minimalConfigsFor; 9 with a window), which check the cells,
// streams, K/V/R/S types and the model buffer.
const MINIMAL = new Set([
    // llama's cache exactly (create_memory's default branch, no window) under other tensors
    // (tests/support/llamacpp_fixtures_plain.cpp)
    "mistral3", "exaone", "internlm2", "minicpm", "qwen2vl", "qwen3vl", "qwen3vlmoe", "glm4", "chatglm", "phi2", "stablelm",
    "gptneox", "starcoder", "gpt2", "falcon", "olmo", "nemotron", "phimoe", "minimax-m2", "bailingmoe2", "deepseek", "dbrx",
    "qwen", "baichuan", "orion", "xverse", "refact", "codeshell", "mpt", "bloom", "jais", "grok", "arctic", "bitnet", "maincoder",
    "jais2", "openelm", "pangu-embedded", "plamo", "talkie", "hunyuan_vl", "cogvlm", "deepseek2-ocr",
    "paddleocr", "plm", "grovemoe", "chameleon", "nanbeige", "graniteswitch",
    // deci's 0-wide cache layers (llama's cache otherwise); mistral4, deepseek2's class
    "deci", "mistral4",
    // nemotron_h's and lfm2's hybrid caches under MoE blocks
    "nemotron_h_moe", "lfm2moe",
    // recurrent state, f32 whatever the cache types: Mamba-1 and RWKV
    "mamba", "jamba", "rwkv6", "rwkv7", "arwkv7", "rwkv6qwen2",
    // hybrids in create_memory's default branch: Mamba-2 beside attention; KDA beside MLA
    "plamo2", "bailingmoe3", "bailingmoe3-nextn", "kimi-k3", "minimax-01",
    // minimax-m3's second cache (llama_kv_cache_msa): the indexer key and an unused V of one head
    "minimax-m3", "qwen4exp",
    // gemma2's and cohere2's iSWA caches under MoE blocks, with their own window rules
    "exaone-moe", "afmoe", "laguna", "smallthinker", "mellum", "mimo2", "mimo2-nextn", "step35", "cohere2moe", "granite_swa",
    "plamo3", "hy_v3", "muse-glimmer"]);
// Architectures whose graph llama.cpp v0.4.0 cannot build with flash attention (the process aborts
// on a GGML_ASSERT); kvplan refuses them with -fa on and auto.
const FA_ABORTS = new Set(["plm"]);
const TOTALS = [300, 1000, 5000, 16384];  // raw n_ctx handed to llama.cpp: three are not multiples of 256
const SEQUENCES = [1, 4];

function parseArgs(argv) {
    const opts = { peer: true, verbose: false, only: null };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) die(`${a} needs a value`);
            return argv[++i];
        };
        if (a === "--kvplan") opts.kvplan = path.resolve(next());
        else if (a === "--make-fixtures") opts.makeFixtures = path.resolve(next());
        else if (a === "--work-dir") opts.workDir = path.resolve(next());
        else if (a === "--only") opts.only = new Set(next().split(","));
        else if (a === "--no-peer") opts.peer = false;
        else if (a === "--verbose") opts.verbose = true;
        else die(`unknown argument: ${a}`);
    }
    if (opts.kvplan == null || opts.makeFixtures == null) die("usage: crosscheck.mjs --kvplan PATH --make-fixtures PATH [--work-dir DIR]");
    opts.workDir ??= fs.mkdtempSync(path.join(os.tmpdir(), "kvplan-crosscheck-"));
    return opts;
}

function die(message) {
    process.stderr.write(`crosscheck: ${message}\n`);
    process.exit(2);
}

// ------------------------------------------------------------------ configurations

// Every size at f16 and q8_0 (flash attention on), node-llama-cpp's own path, one refusal and the
// large context: 24 configurations instead of 378.
function lightConfigsFor(name, file) {
    const out = [];
    const add = (c) => out.push({ id: `${name}#${out.length}`, model: file, fixture: name, threads: 1, ...c });
    for (const sequences of SEQUENCES) {
        for (const nCtx of TOTALS) {
            add({ nCtx, sequences, typeK: "f16", typeV: "f16", flashAttention: "off" });
            add({ nCtx, sequences, typeK: "q8_0", typeV: "q8_0", flashAttention: "on" });
        }
        add({ contextSize: 4096, sequences, typeK: "f16", typeV: "f16", flashAttention: "off", peer: true });
        add({ contextSize: 1000, sequences, typeK: "f16", typeV: "f16", flashAttention: "auto", peer: true });
        if (SWA.has(name)) add({ contextSize: 4096, sequences, typeK: "f16", typeV: "f16", flashAttention: "off", swaFull: true });
        add({ nCtx: 4096, sequences, typeK: "f16", typeV: "q8_0", flashAttention: "off" });
    }
    add({ nCtx: 65536, sequences: 1, typeK: "f16", typeV: "f16", flashAttention: "off" });
    add({ nCtx: 65536, sequences: 4, typeK: "q8_0", typeV: "q8_0", flashAttention: "on" });
    return out;
}

// Two sizes (one not a multiple of 256) at f16 and q8_0 with one and four sequences, node-llama-cpp's
// own path twice, one refusal and the large context: 8 configurations, and a --swa-full run where
// there is a window.
function minimalConfigsFor(name, file) {
    const out = [];
    const add = (c) => out.push({ id: `${name}#${out.length}`, model: file, fixture: name, threads: 1, ...c });
    add({ nCtx: 300, sequences: 1, typeK: "f16", typeV: "f16", flashAttention: "off" });
    add({ nCtx: 5000, sequences: 4, typeK: "f16", typeV: "f16", flashAttention: "off" });
    add({ nCtx: 5000, sequences: 1, typeK: "q8_0", typeV: "q8_0", flashAttention: "on" });
    add({ nCtx: 16384, sequences: 4, typeK: "q8_0", typeV: "q8_0", flashAttention: "on" });
    add({ contextSize: 4096, sequences: 1, typeK: "f16", typeV: "f16", flashAttention: "off", peer: true });
    // node-llama-cpp's path reports nothing when llama.cpp aborts: run it directly where it does
    if (FA_ABORTS.has(name)) add({ nCtx: 1000, sequences: 4, typeK: "f16", typeV: "f16", flashAttention: "auto" });
    else add({ contextSize: 1000, sequences: 4, typeK: "f16", typeV: "f16", flashAttention: "auto", peer: true });
    add({ nCtx: 4096, sequences: 1, typeK: "f16", typeV: "q8_0", flashAttention: "off" });
    add({ nCtx: 65536, sequences: 1, typeK: "f16", typeV: "f16", flashAttention: "off" });
    if (SWA.has(name)) add({ contextSize: 4096, sequences: 4, typeK: "f16", typeV: "f16", flashAttention: "off", swaFull: true });
    return out;
}

function configsFor(name, file) {
    if (MINIMAL.has(name)) return minimalConfigsFor(name, file);
    if (LIGHT.has(name)) return lightConfigsFor(name, file);
    const out = [];
    const add = (c) => out.push({ id: `${name}#${out.length}`, model: file, fixture: name, threads: 1, ...c });
    const fa = (v) => (quantized(v) ? "on" : "off");
    const pairs = TYPES.flatMap((k) => TYPES.map((v) => [k, v]));
    for (const sequences of SEQUENCES) {
        for (const nCtx of TOTALS) {
            // every K/V pair at one size, with four sequences (the pairs' arithmetic depends on
            // neither; the streams and the padding are checked at every size with K = V): 153
            // configurations a fixture, which keeps CI's cross-check near 3 minutes with 100-odd
            // fixtures
            const matrix = nCtx === 5000 && sequences === 4;
            const here = matrix ? pairs : TYPES.map((t) => [t, t]);
            for (const [k, v] of here)
                add({ nCtx, sequences, typeK: k, typeV: v, flashAttention: fa(v) });
        }
        // node-llama-cpp's own path (contextSize per sequence, its padding and batch size): also the
        // configurations the peer estimator is compared on
        for (const [k, v] of [["f16", "f16"], ["q8_0", "q8_0"], ["q4_0", "q4_0"], ["f16", "q8_0"]])
            add({ contextSize: 4096, sequences, typeK: k, typeV: v, flashAttention: fa(v), peer: true });
        add({ contextSize: 1000, sequences, typeK: "f16", typeV: "f16", flashAttention: "auto", peer: true });
        add({ contextSize: 4096, sequences, typeK: "q8_0", typeV: "f16", flashAttention: "auto" });
        if (SWA.has(name)) add({ contextSize: 4096, sequences, typeK: "f16", typeV: "f16", flashAttention: "off", swaFull: true });
        // llama.cpp refuses these; kvplan must refuse them with its words
        add({ nCtx: 4096, sequences, typeK: "f16", typeV: "q8_0", flashAttention: "off" });
        add({ nCtx: 4096, sequences, typeK: "q4_0", typeV: "q4_0", flashAttention: "off" });
    }
    // a large context, for sizes llama.cpp prints with many significant digits
    add({ nCtx: 65536, sequences: 1, typeK: "f16", typeV: "f16", flashAttention: "off" });
    add({ nCtx: 65536, sequences: 4, typeK: "q8_0", typeV: "q8_0", flashAttention: "on" });
    return out;
}

// ------------------------------------------------------------------ running the engines

// One run-llamacpp.mjs process per fixture. The results are complete once every configuration has
// answered; the process is then ended (its process group, which this script created): after some
// refused contexts node-llama-cpp's model dispose can wait forever, and nothing after the last
// result matters here.
function runLlamaCpp(configs, workDir, tag) {
    const batchFile = path.join(workDir, `configs-${tag}.jsonl`);
    fs.writeFileSync(batchFile, configs.map((c) => JSON.stringify(c)).join("\n") + "\n");
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [path.join(here, "run-llamacpp.mjs"), "--batch-file", batchFile],
            { stdio: ["ignore", "pipe", "inherit"], detached: true });
        let buffer = "";
        const results = new Map();
        const models = new Map();
        let finished = false;
        let watchdog = null;
        const finish = (error) => {
            if (finished) return;
            finished = true;
            clearTimeout(watchdog);
            try {
                process.kill(-child.pid, "SIGKILL");
            } catch {
                // already gone
            }
            if (error != null) reject(error);
            else resolve({ results, models, contexts: results.size, refused: [...results.values()].filter((r) => !r.ok).length });
        };
        const arm = () => {
            clearTimeout(watchdog);
            watchdog = setTimeout(() => finish(results.size > 0 ? null : new Error(`run-llamacpp.mjs gave no result for ${tag} in 120 s`)), 120000);
        };
        arm();
        child.stdout.on("data", (chunk) => {
            buffer += chunk;
            let nl;
            while ((nl = buffer.indexOf("\n")) >= 0) {
                const line = buffer.slice(0, nl);
                buffer = buffer.slice(nl + 1);
                if (line.trim() === "") continue;
                const obj = JSON.parse(line);
                if (obj.type === "model") models.set(obj.path, obj);
                else if (obj.type !== "header" && obj.type !== "summary") results.set(obj.id, obj);
                arm();
            }
            if (results.size === configs.length) finish(null);
        });
        child.on("error", (err) => finish(err));
        child.on("close", () => finish(null));
    });
}

function runKvplan(kvplan, args, workDir) {
    return new Promise((resolve) => {
        const child = spawn(kvplan, args, { stdio: ["ignore", "pipe", "pipe"], cwd: workDir });
        let stdout = "", stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
}

// The llama-server command line for what llama.cpp was handed (the engine's own flags, as kvplan
// reads them with --runtime llama.cpp and in `kvplan check`).
function llamaServerWords(config, passed) {
    return [
        "llama-server", "-m", config.model, "-ngl", "0",
        "-c", String(passed.contextSize), "-np", String(config.sequences),
        "-b", String(passed.batchSize), "-ub", String(passed.batchSize),
        "-ctk", config.typeK, "-ctv", config.typeV, "-fa", config.flashAttention,
        ...(config.swaFull ? ["--swa-full"] : []),
    ];
}

// What node-llama-cpp handed llama.cpp. A process that aborted took that record with it; a direct
// configuration then stands for itself (its n_ctx, node-llama-cpp's default batch of 512).
function passedFor(config, result) {
    const passed = result?.nodeLlamaCpp?.passedToLlamaCpp;
    if (passed != null) return passed;
    return result?.crashed && config.nCtx != null ? { contextSize: config.nCtx, batchSize: config.nBatch ?? 512 } : null;
}

// kvplan's answer for every configuration of a fixture from one process: `kvplan check` reads them
// as llama-server command lines, one deployment each, and its JSON holds each one's whole
// `kvplan --format json` document (`plan`) or, for a refused one, the reason (a process per
// configuration spent most of the cross-check's time starting processes). One configuration is
// also asked of `kvplan --runtime llama.cpp` directly, and its document must equal check's plan.
// Returns id -> {refused: reason | null, doc}, or {error} for all when check did not answer.
async function kvplanAnswers(kvplan, workDir, name, configs, results) {
    const asked = configs.filter((c) => passedFor(c, results.get(c.id)) != null);
    const answers = new Map();
    if (asked.length === 0) return answers;
    const file = path.join(workDir, `deployments-${name}.json`);
    fs.writeFileSync(file, JSON.stringify({
        deployments: asked.map((c) => ({ name: c.id, gpu: "24GiB", command: llamaServerWords(c, passedFor(c, results.get(c.id))) })),
    }));
    const run = await runKvplan(kvplan, ["check", "--format", "json", file], workDir);
    let report = null;
    try {
        report = JSON.parse(run.stdout);
    } catch {
        for (const c of asked) answers.set(c.id, { error: `kvplan check exited ${run.code}: ${run.stderr.trim()}` });
        return answers;
    }
    for (const d of report.deployments)
        answers.set(d.name, d.verdict === "invalid" ? { refused: d.reason }
            : d.plan == null ? { error: `kvplan check: ${d.verdict}: ${d.reason}` } : { refused: null, doc: d.plan });
    // the plain command line, for the first configuration kvplan sized
    const first = asked.find((c) => answers.get(c.id)?.doc != null);
    if (first != null) {
        const words = llamaServerWords(first, passedFor(first, results.get(first.id))).slice(1);
        const direct = await runKvplan(kvplan, ["--runtime", "llama.cpp", "--gpu", "24GiB", "--format", "json", ...words], workDir);
        const same = direct.code === 0 && JSON.stringify(JSON.parse(direct.stdout)) === JSON.stringify(answers.get(first.id).doc);
        if (!same) answers.get(first.id).directDiffers = `kvplan --runtime llama.cpp (exit ${direct.code}) and kvplan check differ: ${direct.stderr.trim()}`;
    }
    return answers;
}

async function pool(items, width, fn) {
    const out = new Array(items.length);
    let next = 0;
    await Promise.all(Array.from({ length: width }, async () => {
        while (next < items.length) {
            const i = next++;
            out[i] = await fn(items[i], i);
        }
    }));
    return out;
}

// ------------------------------------------------------------------ comparing

const within = (bytes, printedMiB) => Math.abs(bytes / MiB - printedMiB) <= 0.005 + 1e-9;

function compare(config, lc, modelReport, kv) {
    const problems = [];
    const p = (what) => problems.push(what);
    if (kv == null || kv.error != null) {
        p(kv?.error ?? "kvplan gave no answer");
        return { problems };
    }
    if (!lc.ok) {
        // llama.cpp refused: kvplan must refuse (an invalid deployment, exit 2) with llama.cpp's words
        const why = String(lc.error ?? "").replace(/^.*?llama_init_from_model: /, "").trim();
        if (lc.crashed) {
            // an abort (a GGML_ASSERT) prints no message of llama.cpp's to quote: kvplan must say so
            if (kv.refused == null || !kv.refused.includes("llama.cpp aborts")) p(`llama.cpp aborted ("${why}"), kvplan said: ${kv.refused ?? "it fits"}`);
            return { problems, refused: true };
        }
        if (kv.refused == null) p(`llama.cpp refused ("${why}") but kvplan sized it`);
        else if (why === "" || !kv.refused.includes(why)) p(`llama.cpp refused with "${why}", kvplan said: ${kv.refused}`);
        return { problems, refused: true };
    }
    if (kv.refused != null) {
        p(`kvplan refused: ${kv.refused}`);
        return { problems };
    }
    if (kv.directDiffers != null) p(kv.directDiffers);
    const doc = kv.doc;
    const r = doc.llamacpp.rows[0];
    for (const key of ["n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "n_seq_max"])
        if (Number(lc.context[key]) !== r[key]) p(`${key}: llama.cpp ${lc.context[key]}, kvplan ${r[key]}`);
    if (String(lc.context.kv_unified) !== String(r.kv_unified)) p(`kv_unified: llama.cpp ${lc.context.kv_unified}, kvplan ${r.kv_unified}`);
    const lcCaches = lc.kvCaches ?? [];
    if (lcCaches.length !== r.caches.length) p(`caches: llama.cpp ${lcCaches.length}, kvplan ${r.caches.length}`);
    for (let i = 0; i < Math.min(lcCaches.length, r.caches.length); i++) {
        const a = lcCaches[i], b = r.caches[i];
        const role = b.role;
        if (a.cells !== b.cells) p(`${role} cells: llama.cpp ${a.cells}, kvplan ${b.cells}`);
        if (a.layers !== b.layers) p(`${role} layers: llama.cpp ${a.layers}, kvplan ${b.layers}`);
        if (a.streams !== b.streams) p(`${role} streams: llama.cpp ${a.streams}, kvplan ${b.streams}`);
        if (a.kType !== b.k_type || a.vType !== b.v_type) p(`${role} types: llama.cpp ${a.kType}/${a.vType}, kvplan ${b.k_type}/${b.v_type}`);
        if (!within(b.k_bytes, a.kMiB)) p(`${role} K: llama.cpp ${a.kMiB} MiB, kvplan ${(b.k_bytes / MiB).toFixed(4)} MiB`);
        if (!within(b.v_bytes, a.vMiB)) p(`${role} V: llama.cpp ${a.vMiB} MiB, kvplan ${(b.v_bytes / MiB).toFixed(4)} MiB`);
    }
    // deepseek4's compressor states: shape, planes, layers and bytes
    const lcStates = lc.compressorStates ?? [], states = r.compressor_states ?? [];
    if (lcStates.length !== states.length) p(`compressor states: llama.cpp ${lcStates.length}, kvplan ${states.length}`);
    for (let i = 0; i < Math.min(lcStates.length, states.length); i++) {
        const a = lcStates[i], b = states[i];
        if (a.name !== b.name || a.ratio !== b.ratio || a.stateSize !== b.state_size || a.nEmbdState !== b.n_embd_state)
            p(`${b.name} state: llama.cpp ${a.name} ratio ${a.ratio}, ${a.stateSize} x ${a.nEmbdState}; kvplan ${b.name} ratio ${b.ratio}, ${b.state_size} x ${b.n_embd_state}`);
        if (a.streams !== b.planes || a.layers !== b.layers) p(`${b.name} state: llama.cpp ${a.streams} streams x ${a.layers} layers, kvplan ${b.planes} x ${b.layers}`);
        if (!within(b.bytes, a.sizeMiB)) p(`${b.name} state: llama.cpp ${a.sizeMiB} MiB, kvplan ${(b.bytes / MiB).toFixed(4)} MiB`);
    }
    const lcRs = (lc.recurrent ?? [])[0];
    if ((lcRs != null) !== (r.recurrent != null)) p(`recurrent state: llama.cpp ${lcRs != null}, kvplan ${r.recurrent != null}`);
    if (lcRs != null && r.recurrent != null) {
        if (lcRs.cells !== r.recurrent.cells) p(`recurrent cells: llama.cpp ${lcRs.cells}, kvplan ${r.recurrent.cells}`);
        if (lcRs.layers !== r.recurrent.logged_layers) p(`recurrent layers: llama.cpp ${lcRs.layers}, kvplan ${r.recurrent.logged_layers}`);
        if (!within(r.recurrent.r_bytes, lcRs.rMiB)) p(`R: llama.cpp ${lcRs.rMiB} MiB, kvplan ${(r.recurrent.r_bytes / MiB).toFixed(4)} MiB`);
        if (!within(r.recurrent.s_bytes, lcRs.sMiB)) p(`S: llama.cpp ${lcRs.sMiB} MiB, kvplan ${(r.recurrent.s_bytes / MiB).toFixed(4)} MiB`);
    }
    // all cache buffers together, exact to llama.cpp's +-53 B
    const range = lc.memory?.memoryModuleBytesRange;
    const total = r.kv_bytes + r.recurrent_bytes + r.compressor_state_bytes;
    if (range == null) p("llama.cpp gave no memory breakdown");
    else if (total < range[0] || total > range[1]) p(`cache bytes: llama.cpp ${range[0]}..${range[1]}, kvplan ${total}`);
    // weights: the memory-mapped model buffer
    const mapped = (modelReport?.buffers ?? []).filter((b) => b.buffer === "CPU_Mapped");
    if (mapped.length !== 1) p(`model buffers: ${JSON.stringify(modelReport?.buffers)}`);
    else if (!within(r.model_host_bytes, mapped[0].MiB)) p(`model buffer: llama.cpp ${mapped[0].MiB} MiB, kvplan ${(r.model_host_bytes / MiB).toFixed(4)} MiB`);
    const output = (lc.buffers?.output ?? [])[0];
    if (output == null || r.output_buffer_bytes == null || !within(r.output_buffer_bytes, output.MiB))
        p(`output buffer: llama.cpp ${output?.MiB} MiB, kvplan ${r.output_buffer_bytes}`);
    const compute = (lc.buffers?.computeAtDispose ?? lc.buffers?.compute ?? []).reduce((s, b) => s + b.MiB, 0);
    return { problems, doc, r, compute };
}

// ------------------------------------------------------------------ node-llama-cpp's estimator (a peer)

async function peerComparison(checked) {
    const { getLlama, readGgufFileInfo, GgufInsights, GgmlType, LlamaLogLevel } = await import("node-llama-cpp");
    const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
        progressLogs: false, logLevel: LlamaLogLevel.error });
    const insightsByFile = new Map();
    const lines = [];
    const stats = { kvExact: 0, kvDiffers: 0, totalWithin10: 0, total: 0, v2Within1: 0, v2Max: 0 };
    for (const { config, lc, r, compute } of checked) {
        if (!config.peer || !lc.ok || r == null) continue;
        if (!insightsByFile.has(config.model))
            insightsByFile.set(config.model, await GgufInsights.from(await readGgufFileInfo(config.model), llama));
        const insights = insightsByFile.get(config.model);
        const typeK = GgmlType[config.typeK.toUpperCase()];
        const typeV = GgmlType[config.typeV.toUpperCase()];
        const flashAttention = config.flashAttention !== "off";
        const batchSize = lc.nodeLlamaCpp.batchSize;
        // the estimator's public answer, as node-llama-cpp asks it when creating this context
        const estimate = insights.estimateContextResourceRequirements({
            contextSize: lc.nodeLlamaCpp.contextSize, modelGpuLayers: 0, batchSize, sequences: config.sequences,
            flashAttention, swaFullCache: Boolean(config.swaFull), kvCacheKeyType: typeK, kvCacheValueType: typeV,
        });
        // its cache part alone, with the cell counts its estimator derives (GgufInsights.js)
        const pad = (x) => Math.ceil(x / 256) * 256;
        const padded = pad(lc.nodeLlamaCpp.contextSize);
        const full = config.sequences * padded;
        const swa = insights.swaSize ?? 0;
        const swaKvSize = swa > 0 && !config.swaFull && swa < lc.nodeLlamaCpp.contextSize && (insights.trainContextSize == null || swa < insights.trainContextSize)
            ? Math.min(full, pad(config.sequences * swa + batchSize + 1)) : full;
        const split = insights._estimateContextCacheMemorySplitInBytes({
            fullAttentionKvSize: full, swaKvSize, sequences: config.sequences, totalFileLayers: insights._getTotalFileLayers(),
            finalModelGpuLayers: 0, usingGpu: false, flashAttention, kvCacheKeyType: typeK, kvCacheValueType: typeV,
        });
        // node-llama-cpp's default estimator (V2): a simulation that runs llama.cpp without allocating
        const v2 = await insights.estimateContextResourceRequirementsV2({
            contextSize: lc.nodeLlamaCpp.contextSize, modelGpuLayers: 0, batchSize, sequences: config.sequences,
            flashAttention: config.flashAttention === "auto" ? "auto" : flashAttention, swaFullCache: Boolean(config.swaFull),
            kvCacheKeyType: typeK, kvCacheValueType: typeV,
        });
        const peerKv = split.cpuKVCacheSize + split.cpuRecurrentStateSize;
        const engineKv = r.kv_bytes + r.recurrent_bytes + r.compressor_state_bytes;
        const engineContext = lc.memory.contextCpuBytes + (r.output_buffer_bytes ?? 0);
        stats.total++;
        if (peerKv === engineKv) stats.kvExact++;
        else stats.kvDiffers++;
        if (Math.abs(estimate.cpuRam - engineContext) <= 0.1 * engineContext) stats.totalWithin10++;
        const v2Error = Math.abs(v2.cpuRam - engineContext) / engineContext;
        if (v2Error <= 0.01) stats.v2Within1++;
        stats.v2Max = Math.max(stats.v2Max, v2Error);
        if (peerKv !== engineKv)
            lines.push(`peer: ${config.fixture} ${config.typeK}/${config.typeV} ${config.sequences} seq x ${lc.nodeLlamaCpp.contextSize} -fa ${config.flashAttention}: ` +
                `estimator cache ${(peerKv / MiB).toFixed(3)} MiB, llama.cpp ${(engineKv / MiB).toFixed(3)} MiB (kvplan ${(engineKv / MiB).toFixed(3)}); ` +
                `estimator context total ${(estimate.cpuRam / MiB).toFixed(2)} MiB vs llama.cpp ${(engineContext / MiB).toFixed(2)} MiB ` +
                `(compute ${compute.toFixed(2)}); its simulation (V2) ${(v2.cpuRam / MiB).toFixed(2)} MiB`);
    }
    await llama.dispose();
    return { lines, stats };
}

// ------------------------------------------------------------------ main

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const started = performance.now();
    const fixtureDir = path.join(opts.workDir, "fixtures");
    const names = execFileSync(opts.makeFixtures, [fixtureDir], { encoding: "utf8" }).split("\n").filter(Boolean)
        .filter((n) => opts.only == null || opts.only.has(n));
    const configs = [];
    const results = new Map();
    const models = new Map();
    const summary = { contexts: 0, failed: 0 };
    // Two fixtures at a time: each engine process spends most of its time loading and allocating,
    // and the suite has two cores (CI's time budget is the reason). kvplan answers a fixture as
    // soon as llama.cpp has.
    const runs = await pool(names, 2, async (name) => {
        const own = configsFor(name, path.join(fixtureDir, `${name}.gguf`));
        const run = await runLlamaCpp(own, opts.workDir, name);
        return { own, run, answers: await kvplanAnswers(opts.kvplan, opts.workDir, name, own, run.results) };
    });
    const answers = new Map();
    for (const { own, run, answers: mine } of runs) {
        for (const [k, v] of run.results) results.set(k, v);
        for (const [k, v] of run.models) models.set(k, v);
        for (const [k, v] of mine) answers.set(k, v);
        summary.contexts += run.contexts;
        summary.failed += run.refused;
        configs.push(...own);
    }

    const checked = configs.map((config) => {
        const lc = results.get(config.id);
        if (lc == null) return { config, problems: ["no llama.cpp result"] };
        // a direct configuration that aborted is still compared: kvplan must refuse it
        if (passedFor(config, lc) == null) return { config, lc, problems: [`llama.cpp: ${lc.error}`] };
        return { config, lc, ...compare(config, lc, models.get(config.model), answers.get(config.id)) };
    });

    let passedCount = 0, failedCount = 0, refusals = 0;
    const byFixture = new Map();
    const computeRatios = [];
    for (const c of checked) {
        const tally = byFixture.get(c.config.fixture) ?? { passed: 0, failed: 0 };
        byFixture.set(c.config.fixture, tally);
        if (c.problems.length === 0) {
            passedCount++;
            tally.passed++;
            if (c.refused) refusals++;
            if (c.r?.compute_buffer_estimate_bytes != null && c.compute > 0)
                computeRatios.push(c.r.compute_buffer_estimate_bytes / MiB / c.compute);
        } else {
            failedCount++;
            tally.failed++;
            const cfg = c.config;
            const what = `${cfg.fixture} ${cfg.nCtx != null ? `n_ctx ${cfg.nCtx}` : `contextSize ${cfg.contextSize}`} x ${cfg.sequences} seq ` +
                `K ${cfg.typeK} V ${cfg.typeV} -fa ${cfg.flashAttention}${cfg.swaFull ? " --swa-full" : ""}`;
            for (const problem of c.problems) console.log(`MISMATCH ${what}: ${problem}`);
        }
    }
    if (opts.verbose)
        for (const [name, t] of byFixture) console.log(`  ${name}: ${t.passed} passed, ${t.failed} failed`);
    if (computeRatios.length > 0) {
        computeRatios.sort((a, b) => a - b);
        console.log(`compute buffer estimate / llama.cpp's CPU compute buffer: ${computeRatios[0].toFixed(2)} to ` +
            `${computeRatios.at(-1).toFixed(2)} (median ${computeRatios[computeRatios.length >> 1].toFixed(2)}; an estimate, not checked)`);
    }
    if (opts.peer) {
        const { lines, stats } = await peerComparison(checked);
        for (const line of lines) console.log(line);
        console.log(`peer (node-llama-cpp 3.21.1, informational): its heuristic estimator (GgufInsights.estimateContextResourceRequirements) ` +
            `sizes the caches as llama.cpp does in ${stats.kvExact} of ${stats.total} configurations and the context total within 10% in ` +
            `${stats.totalWithin10}; its default estimator, a llama.cpp simulation (V2, what \`inspect estimate\` uses), is within 1% in ` +
            `${stats.v2Within1} of ${stats.total} (worst ${(100 * stats.v2Max).toFixed(1)}%)`);
    }
    console.log(`${names.length} fixtures, ${summary?.contexts ?? "?"} llama.cpp contexts (${summary?.failed ?? "?"} refused by llama.cpp; ` +
        `${refusals} refusals matched by kvplan), ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log(`${passedCount} passed, ${failedCount} failed`);
    process.exit(failedCount === 0 ? 0 : 1);
}

main().catch((err) => die(err?.stack ?? String(err)));
