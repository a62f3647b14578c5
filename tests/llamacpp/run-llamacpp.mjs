#!/usr/bin/env node
// Runs the real llama.cpp (the CPU prebuilt shipped in node-llama-cpp) on a GGUF file, creates a
// context and prints what llama.cpp allocated, parsed from its own log.
//
//   node run-llamacpp.mjs model.gguf --context-size 4096 --sequences 2 [options]   -> one JSON object
//   node run-llamacpp.mjs [model.gguf] --batch-file configs.jsonl [options]        -> JSON lines
//
// README.md next to this file describes the options and the output.
import fs from "node:fs";
import readline from "node:readline";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
    addByteRanges, isModelSummaryLine, memoryBytesRange, parseContextLog, parseModelLog,
} from "./lib/parse-log.mjs";

const USAGE = `usage: node run-llamacpp.mjs <model.gguf> --context-size N [--sequences S] [--batch-size B]
         [--type-k T] [--type-v T] [--flash-attention [on|off|auto]] [--swa-full]
         [--n-ctx N] [--n-batch B] [--threads N] [--no-mmap] [--full-log]
       node run-llamacpp.mjs [model.gguf] --batch-file configs.jsonl [--full-log] [--no-mmap]`;

const FLAGS = {
    "--context-size": ["contextSize", "int"],
    "--sequences": ["sequences", "int"],
    "--batch-size": ["batchSize", "int"],
    "--type-k": ["typeK", "str"],
    "--type-v": ["typeV", "str"],
    "--flash-attention": ["flashAttention", "fa"],
    "--swa-full": ["swaFull", "bool"],
    "--n-ctx": ["nCtx", "int"],
    "--n-batch": ["nBatch", "int"],
    "--threads": ["threads", "int"],
    "--no-mmap": ["noMmap", "bool"],
    "--full-log": ["fullLog", "bool"],
    "--batch-file": ["batchFile", "str"],
};

function parseArgs(argv) {
    const opts = {};
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        if (arg === "-h" || arg === "--help") {
            process.stdout.write(USAGE + "\n");
            process.exit(0);
        }
        const spec = FLAGS[arg];
        if (spec == null) {
            if (arg.startsWith("-") || opts.model != null) fail(`unknown argument: ${arg}`);
            opts.model = arg;
            continue;
        }
        const [key, kind] = spec;
        const next = argv[i + 1];
        if (kind === "bool") opts[key] = true;
        else if (kind === "fa") {
            // a bare --flash-attention means "on"
            if (next === "on" || next === "off" || next === "auto") i++;
            opts[key] = next === "off" ? "off" : next === "auto" ? "auto" : "on";
        } else {
            if (next == null) fail(`${arg} needs a value`);
            i++;
            if (kind === "int" && !/^\d+$/.test(next)) fail(`${arg} needs a non-negative integer, got "${next}"`);
            opts[key] = kind === "int" ? Number(next) : next;
        }
    }
    return opts;
}

function fail(message) {
    process.stderr.write(`run-llamacpp: ${String(message).split("\n")[0]}\n`);
    process.exit(1);
}

// One configuration, from the command line or from one line of a batch file (same key names).
function normalizeConfig(raw) {
    const fa = raw.flashAttention;
    return {
        id: raw.id,
        model: raw.model,
        contextSize: raw.contextSize,
        sequences: raw.sequences ?? 1,
        batchSize: raw.batchSize,
        typeK: raw.typeK,
        typeV: raw.typeV,
        flashAttention: fa === true || fa === "on" ? true : fa === "auto" ? "auto" : false,
        swaFull: Boolean(raw.swaFull),
        nCtx: raw.nCtx,
        nBatch: raw.nBatch,
        threads: raw.threads ?? 1,
    };
}

const round = (x) => (x == null ? null : Math.round(x * 100) / 100);
const formatLine = ({ level, text }) => (level === "info" ? text : `[${level}] ${text}`);
// the most telling llama.cpp error line: "error loading model: missing tensor 'x'" rather than
// the generic "failed to load model" that follows it
function lastErrorLine(lines) {
    const errors = lines.filter((l) => l.level === "error" || l.level === "fatal").map((l) => l.text);
    return errors.findLast((t) => !/failed to load model$/.test(t)) ?? errors.at(-1) ?? null;
}

// ---------------------------------------------------------------- the llama.cpp child process

class Worker {
    constructor({ direct = false } = {}) {
        this.direct = direct;
        this.child = null;
        this.lines = [];
        this.stderr = [];
        this.pending = null;
        this.modelPath = null;
    }

    async start() {
        const script = fileURLToPath(new URL("./lib/worker.mjs", import.meta.url));
        const env = { ...process.env, RUN_LLAMACPP_DIRECT_LOG: this.direct ? "1" : "0" };
        this.child = fork(script, [], { stdio: ["ignore", this.direct ? "pipe" : "ignore", "pipe", "ipc"], env });
        this.stderr = [];
        // direct mode: node-llama-cpp's fallback printer sends GGML_LOG_LEVEL_INFO lines to stderr
        // and all other levels to stdout; the two pipes interleave only approximately
        if (this.direct) {
            readline.createInterface({ input: this.child.stdout }).on("line", (text) => {
                if (text.trim() !== "") this.lines.push({ level: "debug|warn|error", text });
            });
        }
        readline.createInterface({ input: this.child.stderr }).on("line", (line) => {
            if (this.direct && line.trim() !== "") this.lines.push({ level: "info", text: line });
            this.stderr.push(line);
            if (this.stderr.length > 20) this.stderr.shift();
        });
        this.child.on("message", (msg) => {
            if (msg.t === "log") this.lines.push({ level: msg.level, text: msg.text });
            else this.settle(msg);
        });
        this.child.on("exit", (code, signal) => {
            this.child = null;
            this.modelPath = null;
            this.settle({ t: "exit", code, signal });
        });
        const ready = await this.wait();
        if (ready.t !== "ready") throw new Error(`llama.cpp worker did not start: ${this.crashText(ready)}`);
        this.llamaCpp = ready.llamaCpp;
    }

    settle(msg) {
        const pending = this.pending;
        this.pending = null;
        pending?.(msg);
    }

    wait() {
        return new Promise((resolve) => { this.pending = resolve; });
    }

    // Sends one command; returns its reply and the log lines llama.cpp printed meanwhile.
    async request(msg) {
        if (this.child == null) await this.start();
        this.lines = [];
        const reply = this.wait();
        this.child.send(msg);
        const result = await reply;
        // a crash may leave log lines still in the pipe; they are lost with the process
        return { reply: result, lines: this.lines };
    }

    crashText(reply) {
        const assert = this.stderr.filter((l) => /GGML_ASSERT|GGML_ABORT|error|terminate|what\(\)/i.test(l)).at(-1);
        const how = reply.signal != null ? `killed by ${reply.signal}` : `exited with code ${reply.code}`;
        return `llama.cpp process ${how}${assert ? `: ${assert.trim()}` : ""}`;
    }

    async stop() {
        if (this.child == null) return;
        const exited = new Promise((resolve) => this.child.once("exit", resolve));
        this.child.send({ cmd: "quit" });
        await exited;
    }
}

// ---------------------------------------------------------------- reports

function modelReport(modelPath, reply, lines, fullLog) {
    const parsed = parseModelLog(lines);
    return {
        path: modelPath,
        architecture: parsed.info.arch ?? null,
        trainContextSize: reply.trainContextSize ?? parsed.info.n_ctx_train ?? null,
        nodeLlamaCppSwaSize: reply.swaSize ?? null,
        info: parsed.info,
        buffers: parsed.modelBuffers,
        warnings: parsed.warnings,
        loadMs: round(reply.loadMs),
        log: (fullLog ? lines : lines.filter((l) => isModelSummaryLine(l.text))).map(formatLine),
    };
}

function contextReport(config, reply, lines, worker) {
    const parsed = parseContextLog(lines);
    addByteRanges(parsed);
    const crashed = reply.t === "exit";
    const memory = reply.memory ?? null;
    if (memory != null) memory.memoryModuleBytesRange = memoryBytesRange(memory.contextCpuBytes, parsed);
    const error = crashed ? worker.crashText(reply) : reply.ok ? null : (lastErrorLine(lines) ?? reply.error);
    return {
        ok: !crashed && reply.ok,
        ...(config.id != null ? { id: config.id } : {}),
        ...(error != null ? { error } : {}),
        ...(crashed ? { crashed: true } : {}),
        request: {
            contextSize: config.contextSize ?? null,
            sequences: config.sequences,
            batchSize: config.batchSize ?? null,
            typeK: config.typeK ?? null,
            typeV: config.typeV ?? null,
            flashAttention: config.flashAttention,
            swaFull: config.swaFull,
            nCtx: config.nCtx ?? null,
            nBatch: config.nBatch ?? null,
        },
        nodeLlamaCpp: {
            contextSize: reply.contextSize ?? null,
            batchSize: reply.batchSize ?? null,
            passedToLlamaCpp: reply.passed ?? null,
        },
        ...parsed,
        memory,
        timing: { createContextMs: round(reply.createMs) },
        log: lines.map(formatLine),
    };
}

const loadErrors = new Map(); // model path -> error, so a bad model is tried once

async function runOne(worker, config, { noMmap, fullLog }) {
    let model = null;
    if (loadErrors.has(config.model)) return { model: null, loadError: loadErrors.get(config.model) };
    if (worker.modelPath !== config.model) {
        const { reply, lines } = await worker.request({ cmd: "load", model: config.model, noMmap });
        if (reply.t !== "loaded" || !reply.ok) {
            const why = reply.t === "exit" ? worker.crashText(reply) : (lastErrorLine(lines) ?? reply.error);
            loadErrors.set(config.model, `failed to load ${config.model}: ${why}`);
            return { model: null, loadError: loadErrors.get(config.model) };
        }
        worker.modelPath = config.model;
        model = modelReport(config.model, reply, lines, fullLog);
    }
    const { reply, lines } = await worker.request({ cmd: "run", config });
    if (reply.t !== "exit") return { model, result: contextReport(config, reply, lines, worker) };

    // llama.cpp crashed: the queued log lines died with it. Run the configuration again in a
    // process that writes the log synchronously, to report what was allocated before the crash.
    const rerun = new Worker({ direct: true });
    await rerun.start();
    await rerun.request({ cmd: "load", model: config.model, noMmap });
    const again = await rerun.request({ cmd: "run", config });
    await rerun.stop();
    await new Promise((resolve) => setTimeout(resolve, 10)); // let the stdout pipe drain
    const result = contextReport(config, again.reply, again.lines.slice(), rerun);
    result.logLevels = "lost (log captured from stdout after a crash)";
    return { model, result };
}

async function* readJsonLines(file) {
    const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
    let index = 0;
    for await (const line of rl) {
        index++;
        if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
        try {
            yield { index, value: JSON.parse(line) };
        } catch (err) {
            yield { index, parseError: String(err.message) };
        }
    }
}

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

// ---------------------------------------------------------------- main

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    if (opts.batchFile == null && opts.model == null) fail(USAGE.split("\n")[0]);
    const worker = new Worker();
    await worker.start();

    if (opts.batchFile == null) {
        if (opts.contextSize == null && opts.nCtx == null) fail("--context-size is required");
        const { model, loadError, result } = await runOne(worker, normalizeConfig(opts), opts);
        await worker.stop();
        if (loadError != null) fail(loadError);
        process.stdout.write(JSON.stringify({ ...result, llamaCpp: worker.llamaCpp, model }, null, 2) + "\n");
        if (!result.ok) fail(`context creation failed: ${result.error}`);
        return;
    }

    // batch mode: configs are grouped by model, so each model is loaded once (unless a crash
    // forces a restart); every result line carries the 1-based line number of its config.
    emit({ type: "header", llamaCpp: worker.llamaCpp });
    const groups = new Map();
    for await (const item of readJsonLines(opts.batchFile)) {
        if (item.parseError != null) {
            emit({ index: item.index, ok: false, error: `bad JSON: ${item.parseError}` });
            continue;
        }
        const config = normalizeConfig({ model: opts.model, ...item.value });
        if (config.model == null) {
            emit({ index: item.index, ok: false, error: "no model: give one on the command line or as \"model\"" });
            continue;
        }
        if (!groups.has(config.model)) groups.set(config.model, []);
        groups.get(config.model).push({ index: item.index, config });
    }
    let count = 0;
    let failed = 0;
    let totalCreateMs = 0;
    const started = performance.now();
    for (const items of groups.values()) {
        for (const { index, config } of items) {
            const { model, loadError, result } = await runOne(worker, config, opts);
            if (model != null) emit({ type: "model", ...model });
            if (loadError != null) {
                failed++;
                emit({ index, ...(config.id != null ? { id: config.id } : {}), ok: false, error: loadError });
                continue;
            }
            count++;
            if (!result.ok) failed++;
            totalCreateMs += result.timing.createContextMs ?? 0;
            emit({ index, ...result });
        }
    }
    await worker.stop();
    emit({
        type: "summary",
        contexts: count,
        failed,
        totalCreateContextMs: round(totalCreateMs),
        meanCreateContextMs: count ? round(totalCreateMs / count) : null,
        wallMs: round(performance.now() - started),
    });
}

process.stdout.on("error", (err) => process.exit(err.code === "EPIPE" ? 0 : 1)); // e.g. piped into head
main().catch((err) => fail(err?.message ?? err));
