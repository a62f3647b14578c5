// Child process of run-llamacpp.mjs: owns the llama.cpp instance, so that an abort inside
// llama.cpp (GGML_ASSERT, segfault) only kills this process and the parent can report it.
//
// parent -> child: {cmd: "load", model, noMmap} | {cmd: "run", config} | {cmd: "quit"}
// child -> parent: {t: "log", level, text}  (every llama.cpp log line, as it arrives)
//                  {t: "ready", llamaCpp} | {t: "loaded", ...} | {t: "ran", ...}
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const send = (msg) => new Promise((resolve) => process.send(msg, resolve));
const oneLine = (err) => String(err?.message ?? err).split("\n").map((s) => s.trim()).filter(Boolean).join(" | ");

let pendingLogs = 0;
let lastLogAt = 0;
let sentinelSeen = false;
let sentinel = null;

function onLog(level, message) {
    for (const text of String(message).split("\n")) {
        if (text.trim() === "") continue;
        if (sentinel != null && sentinel.test(text)) sentinelSeen = true;
        pendingLogs++;
        lastLogAt = performance.now();
        process.send({ t: "log", level, text }, () => pendingLogs--);
    }
}

// llama.cpp logs from worker threads and the lines reach JS through a queue: wait until it is
// quiet (and, if given, until the line matching `until` has arrived), then until IPC has flushed.
async function drain(until = null) {
    const deadline = performance.now() + 2000;
    while (performance.now() < deadline) {
        await new Promise((resolve) => setImmediate(resolve));
        const quiet = performance.now() - lastLogAt > 2;
        if (quiet && (until == null || sentinelSeen) && pendingLogs === 0) break;
        if (!quiet || (until != null && !sentinelSeen)) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    sentinel = null;
}

// In "direct" mode llama.cpp writes its log straight to this process's stdout, synchronously,
// so the lines printed before a crash survive it (the levels are lost). The parent uses it to
// re-run a configuration that crashed. Normally the lines come through node-llama-cpp's logger,
// which queues them to the JS thread: they carry their level but die with the process.
const direct = process.env.RUN_LLAMACPP_DIRECT_LOG === "1";
const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.debug,
    ...(direct ? { debug: true } : { logger: onLog }),
});
if (direct) llama._bindings.setLoggerLogLevel(6); // 6 = debug, as node-llama-cpp maps it

// Record (and with --n-ctx / --n-batch override) the options node-llama-cpp hands to the addon,
// i.e. what ends up in llama_context_params.
let passed = null;
let overrides = null;
let constructed = 0;
const bindings = llama._bindings;
const AddonContext = bindings.AddonContext;
bindings.AddonContext = new Proxy(AddonContext, {
    construct(target, args) {
        const options = args[1];
        if (options != null && overrides != null) {
            if (overrides.nCtx != null) options.contextSize = overrides.nCtx;
            if (overrides.nBatch != null) options.batchSize = overrides.nBatch;
        }
        passed = options == null ? null : { ...options };
        constructed++;
        return Reflect.construct(target, args, target);
    },
});

let model = null;

async function load({ model: modelPath, noMmap }) {
    if (model != null) await model.dispose();
    model = null;
    const started = performance.now();
    // The model buffer line is what the parent reads from a load: wait for it, not only for a quiet
    // queue (under load a 64-layer fixture's lines came more than 2 ms apart, and a cross-check run
    // once read a load with no model buffer at all).
    sentinel = /^load_tensors:\s+\S+ model buffer size =/;
    sentinelSeen = false;
    try {
        model = await llama.loadModel({
            modelPath: path.resolve(modelPath),
            gpuLayers: 0,
            useMmap: !noMmap,
            ignoreMemorySafetyChecks: true,
        });
    } catch (err) {
        await drain();
        return { t: "loaded", ok: false, error: oneLine(err) };
    }
    const loadMs = performance.now() - started;
    const modelBufferLine = sentinel;
    // node-llama-cpp sizes every new context by first building a throw-away no_alloc copy of it
    // (a second model load plus a second context, logs muted). Use its plain JS estimate instead:
    // memory checks are off anyway, and it is the real context that we measure.
    const insights = model.fileInsights;
    insights.estimateContextResourceRequirementsV2 = async (o) => insights.estimateContextResourceRequirements(o);
    await drain(modelBufferLine);
    return {
        t: "loaded",
        ok: true,
        trainContextSize: model.trainContextSize,
        swaSize: insights.swaSize ?? null,
        loadMs,
    };
}

async function run(config) {
    const options = {
        contextSize: config.contextSize ?? config.nCtx,
        sequences: config.sequences,
        flashAttention: config.flashAttention,
        swaFullCache: config.swaFull,
        threads: config.threads,
        ignoreMemorySafetyChecks: true,
        failedCreationRemedy: false,
    };
    if (config.batchSize != null) options.batchSize = config.batchSize;
    if (config.typeK != null) options.experimentalKvCacheKeyType = config.typeK.toUpperCase();
    if (config.typeV != null) options.experimentalKvCacheValueType = config.typeV.toUpperCase();

    overrides = config.nCtx != null || config.nBatch != null ? { nCtx: config.nCtx, nBatch: config.nBatch } : null;
    passed = null;
    constructed = 0;

    sentinel = /^\w+: reserve took /;
    sentinelSeen = false;
    const started = performance.now();
    let context = null;
    let error = null;
    try {
        context = await model.createContext(options);
    } catch (err) {
        error = err;
    }
    const createMs = performance.now() - started;
    await drain(error == null ? sentinel : null);

    const result = { t: "ran", ok: error == null, createMs, passed, constructed };
    if (error != null) result.error = oneLine(error);
    if (context != null) {
        const breakdown = context._ctx.getMemoryBreakdown();
        result.memory = { contextCpuBytes: breakdown.cpuRam, contextGpuBytes: breakdown.gpuVram };
        result.contextSize = context.contextSize;
        result.batchSize = context.batchSize;
        await context.dispose(); // logs the compute buffer size with 4 decimals
        await drain();
    }
    return result;
}

process.on("disconnect", () => process.exit(0)); // the parent is gone

process.on("message", async (msg) => {
    if (msg.cmd === "load") await send(await load(msg));
    else if (msg.cmd === "run") await send(await run(msg.config));
    else if (msg.cmd === "quit") {
        if (model != null) await model.dispose();
        await llama.dispose();
        process.disconnect();
    }
});

await send({ t: "ready", llamaCpp: { ...llama.llamaCppRelease, buildType: llama.buildType, gpu: llama.gpu } });
