// Parses llama.cpp's own log lines ({level, text}) into numbers.
// The formats are those of the llama.cpp bundled with node-llama-cpp 3.21.1 (release v0.4.0):
// src/llama-context.cpp, src/llama-kv-cache.cpp, src/llama-kv-cache-iswa.cpp, src/llama-memory-recurrent.cpp,
// src/llama-kv-cache-dsv4.cpp.

const num = (s) => Number(s);
const MIB = String.raw`(-?[\d.]+) MiB`;

export const RE = {
    ctxParam: /^llama_context: (n_seq_max|n_ctx|n_ctx_seq|n_batch|n_ubatch|causal_attn|flash_attn|kv_unified|freq_base|freq_scale|n_rs_seq|n_outputs_max|n_outputs_max_per_seq)\s+= (.+)$/,
    printInfo: /^print_info: ([A-Za-z0-9_. ]+?)\s+= (.*)$/,
    kv: new RegExp(String.raw`^(\w+): size =\s+${MIB} \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+)/(\d+) seqs\), K \((\w+)\):\s*${MIB}, V \((\w+)\):\s*${MIB}$`),
    rs: new RegExp(String.raw`^(\w+): size =\s+${MIB} \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+) seqs\s+(\d+) rs_seq\), R \((\w+)\):\s*${MIB}, S \((\w+)\):\s*${MIB}(?:, P \((\w+)\):\s*${MIB})?$`),
    // deepseek4's compressor states (llama_dsv4_comp_state): "csa ratio = 4, state = 8 x 128, streams = 2, ..."
    compState: new RegExp(String.raw`^llama_dsv4_comp_state: (\w+) ratio = (\d+), state = (\d+) x (\d+), streams = (\d+), rs_seq = (\d+), layers = (\d+), size =\s+${MIB}$`),
    creating: /^(\w+): creating\s+(.+?) cache, size = (\d+) cells$/,
    kvBuffer: new RegExp(String.raw`^(\w+):\s+(\S+) (KV|RS) buffer size =\s+${MIB}$`),
    modelBuffer: new RegExp(String.raw`^load_tensors:\s+(\S+) model buffer size =\s+${MIB}$`),
    outputBuffer: new RegExp(String.raw`^\w+:\s+(\S+)\s+output buffer size =\s+${MIB}$`),
    computeBuffer: new RegExp(String.raw`^\w+:\s+(\S+) compute buffer size =\s+${MIB}$`),
    graphNodes: /^\w+: graph nodes\s+= (\d+)(?: \(with bs=(\d+)\), (\d+) \(with bs=1\))?$/,
    graphSplits: /^\w+: graph splits = (\d+)(?: \(with bs=(\d+)\), (\d+) \(with bs=1\))?$/,
    reserveTook: /^\w+: reserve took ([\d.]+) ms/,
    computeExact: new RegExp(String.raw`^~llama_context:\s+(\S+) compute buffer size is\s+${MIB}`),
    probe: /^resolve_fused_ops: (.+?) (enabled|not supported, set to disabled)$/,
    attnRot: /^llama_kv_cache: attn_rot_([kv]) = (\d+), n_embd_head_k_all = (-?\d+)$/,
};

function parseValue(text) {
    const t = text.trim();
    if (/^-?\d+$/.test(t)) return Number(t);
    if (/^-?\d+\.\d+(e[-+]?\d+)?$/i.test(t)) return Number(t);
    if (t === "true") return true;
    if (t === "false") return false;
    return t;
}

export function parseContextLog(lines) {
    const out = {
        context: {},
        kvCaches: [],
        recurrent: [],
        compressorStates: [],
        buffers: { kv: [], rs: [], output: [], compute: [] },
        fusedOps: {},
        attnRot: {},
        graph: {},
        warnings: [],
    };
    let pendingRole = null;
    for (const { level, text } of lines) {
        let m;
        if (level === "warn" || level === "error" || level === "fatal") out.warnings.push(text);
        if ((m = RE.ctxParam.exec(text))) out.context[m[1]] = parseValue(m[2]);
        else if ((m = RE.creating.exec(text))) pendingRole = { name: m[2].trim(), cells: num(m[3]) };
        else if ((m = RE.kv.exec(text))) {
            out.kvCaches.push({
                source: m[1],
                role: pendingRole?.name ?? null,
                sizeMiB: num(m[2]),
                cells: num(m[3]),
                layers: num(m[4]),
                seqs: num(m[5]),
                streams: num(m[6]),
                kType: m[7],
                kMiB: num(m[8]),
                vType: m[9],
                vMiB: num(m[10]),
            });
            pendingRole = null;
        } else if ((m = RE.rs.exec(text))) {
            out.recurrent.push({
                source: m[1],
                sizeMiB: num(m[2]),
                cells: num(m[3]),
                layers: num(m[4]),
                seqs: num(m[5]),
                rsSeq: num(m[6]),
                rType: m[7],
                rMiB: num(m[8]),
                sType: m[9],
                sMiB: num(m[10]),
                pType: m[11] ?? null,
                pMiB: m[12] != null ? num(m[12]) : null,
            });
        } else if ((m = RE.compState.exec(text))) {
            out.compressorStates.push({
                name: m[1].toUpperCase(),
                ratio: num(m[2]),
                stateSize: num(m[3]),
                nEmbdState: num(m[4]),
                streams: num(m[5]),
                rsSeq: num(m[6]),
                layers: num(m[7]),
                sizeMiB: num(m[8]),
            });
        } else if ((m = RE.kvBuffer.exec(text))) {
            out.buffers[m[3] === "KV" ? "kv" : "rs"].push({ source: m[1], buffer: m[2], MiB: num(m[4]) });
        } else if ((m = RE.outputBuffer.exec(text))) out.buffers.output.push({ buffer: m[1], MiB: num(m[2]) });
        else if ((m = RE.computeBuffer.exec(text))) out.buffers.compute.push({ buffer: m[1], MiB: num(m[2]) });
        else if ((m = RE.graphNodes.exec(text))) out.graph.nodes = m[3] != null ? { pp: num(m[1]), tg: num(m[3]), ppTokens: num(m[2]) } : num(m[1]);
        else if ((m = RE.graphSplits.exec(text))) out.graph.splits = m[3] != null ? { pp: num(m[1]), tg: num(m[3]), ppTokens: num(m[2]) } : num(m[1]);
        else if ((m = RE.attnRot.exec(text))) out.attnRot[m[1]] = num(m[2]);
        else if ((m = RE.probe.exec(text))) out.fusedOps[m[1]] = m[2] === "enabled";
        else if ((m = RE.computeExact.exec(text))) out.buffers.computeAtDispose = [...(out.buffers.computeAtDispose ?? []), { buffer: m[1], MiB: num(m[2]) }];
    }
    return out;
}

export function parseModelLog(lines) {
    const info = {};
    const modelBuffers = [];
    const warnings = [];
    for (const { level, text } of lines) {
        let m;
        if (level === "warn" || level === "error" || level === "fatal") warnings.push(text);
        if ((m = RE.printInfo.exec(text))) info[m[1].trim()] = parseValue(m[2]);
        else if ((m = RE.modelBuffer.exec(text))) modelBuffers.push({ buffer: m[1], MiB: num(m[2]) });
    }
    return { info, modelBuffers, warnings };
}

// llama.cpp prints sizes as "%.2f MiB" (and "%.4f MiB" for the compute buffer at teardown):
// turn a printed value back into the inclusive range of byte counts that print that way.
export function mibRange(mib, decimals = 2) {
    if (mib == null) return null;
    const half = 0.5 * 10 ** -decimals;
    return [Math.max(0, Math.ceil((mib - half) * MiB_BYTES)), Math.floor((mib + half) * MiB_BYTES)];
}
const MiB_BYTES = 1024 * 1024;

export function addByteRanges(parsed) {
    for (const kv of parsed.kvCaches) {
        kv.kBytesRange = mibRange(kv.kMiB);
        kv.vBytesRange = mibRange(kv.vMiB);
    }
    for (const rs of parsed.recurrent) {
        rs.rBytesRange = mibRange(rs.rMiB);
        rs.sBytesRange = mibRange(rs.sMiB);
    }
}

// getMemoryBreakdown() gives the exact bytes of (memory module buffers + compute buffers) on the CPU;
// minus the compute buffer (printed with 4 decimals at teardown) this pins the KV/RS buffer bytes to +-53 bytes.
export function memoryBytesRange(contextCpuBytes, parsed) {
    const compute = parsed.buffers.computeAtDispose;
    if (contextCpuBytes == null || compute == null) return null;
    const [lo, hi] = compute.map((c) => mibRange(c.MiB, 4)).reduce((a, b) => [a[0] + b[0], a[1] + b[1]], [0, 0]);
    return [contextCpuBytes - hi, contextCpuBytes - lo];
}

export const isModelSummaryLine = (text) =>
    /^(print_info|load_tensors|llama_model_loader: (file|- type|- kv)|load:)/.test(text);
