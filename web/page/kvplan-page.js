// The page: the form and the address are kvplan's own command line. Each change builds the words
// `kvplan --model ... --gpu ...` in the CLI's long flag names, runs them through the WebAssembly
// module (the CLI's run_cli) and shows what the CLI prints: its JSON rows as a table, its text,
// its JSON document byte for byte, and its one-line errors beside the field they name.
(function () {
  "use strict";

  // Form fields, in the order their flags are written; each id is its flag's long name.
  const FIELDS = ["model", "weight-dtype", "gpu", "gpus", "used", "budget", "ctx", "batch", "kv-dtype", "runtime"];
  const DEFAULTS = {model: "llama3.1-8b", ctx: "32k,64k,128k", gpu: "4090", "kv-dtype": "fp16,fp8"};
  const VIEWS = ["table", "text", "json"];
  // The table's byte columns after ctx, dtype and verdict: the JSON rows' exact integers.
  const BYTE_COLUMNS = ["total_bytes", "headroom_bytes", "capacity_bytes", "kv_bytes", "weights_bytes", "overhead_bytes"];

  const $ = (id) => document.getElementById(id);
  let kvplan = null;
  let view = "table";
  let extraWords = [];  // the engine's flags, as words
  let last = null;      // the last answer: {words, json, text}
  let planning = Promise.resolve();
  window.kvplanPage = {ready: false, plans: 0, lastPlanMs: null, firstTableMs: null};

  // ---- the address <-> the form -------------------------------------------------------------

  /// `--name value` words from the "engine flags" text; `-x` short spellings kept as typed.
  function splitWords(text) {
    return text.trim().split(/\s+/).filter((w) => w.length > 0);
  }

  /// Address parameters -> form values, extra engine flags and the view.
  function readAddress() {
    const params = new URLSearchParams(location.search);
    const empty = [...params.keys()].length === 0;
    for (const id of FIELDS) $(id).value = params.has(id) ? params.get(id) : (empty ? (DEFAULTS[id] || "") : "");
    extraWords = [];
    for (const [key, value] of params) {
      if (FIELDS.includes(key) || key === "format") continue;
      extraWords.push(key.startsWith("-") ? key : `--${key}`);
      if (value !== "") extraWords.push(value);
    }
    $("extra").value = extraWords.join(" ");
    const format = params.get("format");
    view = format === "json" ? "json" : format === "text" ? "text" : "table";
  }

  /// The form -> the address, in the CLI's flag names (a flag without a value: name=).
  function writeAddress() {
    const params = new URLSearchParams();
    for (const id of FIELDS) if ($(id).value.trim() !== "") params.set(id, $(id).value.trim());
    const words = splitWords($("extra").value);
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      const key = word.startsWith("--") ? word.slice(2) : word;
      const next = words[i + 1];
      const takesValue = next !== undefined && !/^-[A-Za-z-]/.test(next);
      params.append(key, takesValue ? next : "");
      if (takesValue) i++;
    }
    if (view !== "table") params.set("format", view);
    const query = params.toString().replace(/%2C/g, ",").replace(/%2B/g, "+");
    const address = `${location.pathname}${query ? "?" + query : ""}`;
    if (address !== `${location.pathname}${location.search}`) history.replaceState(null, "", address);
  }

  /// kvplan's words for the form: every non-empty field as --flag value, then the engine's flags.
  function words() {
    const list = [];
    for (const id of FIELDS) {
      const value = $(id).value.trim();
      if (value !== "") list.push(`--${id}`, value);
    }
    return list.concat(splitWords($("extra").value));
  }

  function shellQuote(word) {
    return /^[A-Za-z0-9_.,:+=\/@%-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
  }

  // ---- errors beside their fields -----------------------------------------------------------

  function clearErrors() {
    for (const element of document.querySelectorAll(".error")) element.textContent = "";
    for (const element of document.querySelectorAll("[aria-invalid]")) element.removeAttribute("aria-invalid");
  }

  /// The field a CLI message names: `--ctx: ...` is the ctx field; a dropped file's path is the
  /// file field; a flag of the engine's is the engine-flags field.
  function fieldFor(message) {
    const flag = /^--([a-z0-9-]+)/.exec(message);
    if (flag && FIELDS.includes(flag[1])) return flag[1];
    if (message.startsWith("/uploads/")) return "file";
    if (flag || /^-[a-z]/.test(message)) return "extra";
    // A few messages name their value, not their flag.
    if (/KV cache dtype|cache type/i.test(message)) return "kv-dtype";
    if (/weight (dtype|format)/i.test(message)) return "weight-dtype";
    if (/\bmodel\b/i.test(message)) return "model";
    if (/\bGPU\b/.test(message)) return "gpu";
    return null;
  }

  function showError(stderr) {
    const line = stderr.trim().split("\n")[0] || "kvplan: error: no answer";
    const message = line.replace(/^kvplan: error: /, "");
    const field = fieldFor(message);
    const target = field ? $(`${field}-error`) : $("general-error");
    target.textContent = line;
    if (field) $(field).setAttribute("aria-invalid", "true");
  }

  // ---- the answer ---------------------------------------------------------------------------

  /// 25,757,220,864 from "25757220864": the CLI's digits, grouped, never a JavaScript number.
  function groupDigits(digits) {
    const text = String(digits);
    const negative = text.startsWith("-");
    const body = negative ? text.slice(1) : text;
    return (negative ? "-" : "") + body.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  function cell(tag, text, className) {
    const element = document.createElement(tag);
    element.textContent = text;
    if (className) element.className = className;
    return element;
  }

  /// The rules behind a row, in the JSON document's own words.
  function rowRules(row) {
    const lines = [];
    lines.push(`weights: ${row.weights_rule}`);
    for (const part of row.kv_breakdown || []) {
      lines.push(`KV: ${part.kind} x ${part.layers} layers, ${groupDigits(part.tokens_held)} tokens held, ${groupDigits(part.bytes)} bytes`);
    }
    if (row.decode_bound && row.decode_bound.rule) lines.push(`speed: ${row.decode_bound.rule}`);
    for (const note of row.assumptions || []) lines.push(`assumption: ${typeof note === "string" ? note : note.message || JSON.stringify(note)}`);
    for (const note of row.warnings || []) lines.push(`warning: ${typeof note === "string" ? note : note.message || JSON.stringify(note)}`);
    for (const finding of row.findings || []) lines.push(`finding: ${finding.message || JSON.stringify(finding)}`);
    return lines;
  }

  let selectedRule = null;
  function showRule(index, button) {
    const rule = $("rule");
    rule.textContent = "";
    if (selectedRule) selectedRule.setAttribute("aria-expanded", "false");
    if (selectedRule === button) { selectedRule = null; return; }
    selectedRule = button;
    button.setAttribute("aria-expanded", "true");
    const row = last.json.rows[index];
    rule.appendChild(cell("h3", `Row ${index + 1}: ctx ${groupDigits(row.ctx)}, ${row.kv_dtype}: ${row.verdict}`));
    const list = document.createElement("ul");
    for (const line of rowRules(row)) list.appendChild(cell("li", line));
    rule.appendChild(list);
  }

  function renderTable(json) {
    const body = $("fit").querySelector("tbody");
    body.textContent = "";
    selectedRule = null;
    $("rule").textContent = "";
    json.rows.forEach((row, index) => {
      const tr = document.createElement("tr");
      tr.appendChild(cell("td", groupDigits(row.ctx), "num"));
      tr.appendChild(cell("td", row.kv_dtype));
      const verdict = document.createElement("td");
      const button = cell("button", `${row.fits ? "✓" : "✗"} ${row.verdict.replace(/_/g, " ")}`, row.fits ? "fits" : "nofit");
      button.type = "button";
      button.title = rowRules(row).join("\n");
      button.setAttribute("aria-expanded", "false");
      button.setAttribute("aria-controls", "rule");
      button.addEventListener("click", () => showRule(index, button));
      verdict.appendChild(button);
      tr.appendChild(verdict);
      for (const key of BYTE_COLUMNS) {
        tr.appendChild(cell("td", row[key] === null || row[key] === undefined ? "" : groupDigits(row[key]), "num"));
      }
      body.appendChild(tr);
    });
    const model = json.model || {};
    const gpu = json.gpu || {};
    const summary = $("summary");
    summary.textContent = "";
    summary.appendChild(cell("p", `${model.name || model.id} on ${gpu.count > 1 ? gpu.count + " x " : ""}${gpu.name}: ${groupDigits(gpu.memory_bytes)} bytes (${gpu.memory_basis}), runtime ${json.settings.runtime}.`));
    const parts = (json.max_ctx_by_kv_dtype || []).map((limit) =>
      `${limit.kv_dtype} ${limit.max_ctx === null ? "none" : (limit.search_limit_reached ? "at least " : "") + groupDigits(limit.max_ctx)}`);
    if (parts.length) summary.appendChild(cell("p", `Largest ctx that fits (batch ${json.settings.batch}): ${parts.join("; ")}`));
  }

  function renderChart(svg) {
    const box = $("chart-box");
    if (!svg) { box.hidden = true; return; }
    const image = document.createElement("img");
    image.alt = "Memory against context length for each KV cache dtype (kvplan plot)";
    image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    $("chart").textContent = "";
    $("chart").appendChild(image);
    box.hidden = false;
  }

  function showView() {
    for (const name of VIEWS) $(`view-${name}`).setAttribute("aria-pressed", String(name === view));
    $("answer").hidden = view !== "table";
    $("text").hidden = view === "table";
    if (!last) return;
    if (view === "json") $("text").textContent = last.jsonText;
    if (view === "text") $("text").textContent = last.text;
  }

  /// The chart's words: `kvplan plot` takes the model, card, dtypes, engine and the last context.
  function plotWords(list) {
    const keep = new Set(["--model", "--gpu", "--kv-dtype", "--batch", "--runtime"]);
    const out = ["plot"];
    for (let i = 0; i + 1 < list.length && i < 2 * FIELDS.length; i += 2) if (keep.has(list[i])) out.push(list[i], list[i + 1]);
    const ctx = $("ctx").value.trim();
    if (ctx) out.push("--ctx", ctx.split(",").pop().trim());
    if ($("gpus").value.trim()) out[out.indexOf("--gpu") + 1] = `${$("gpus").value.trim()}x${$("gpu").value.trim()}`;
    return out.concat(["--points", "24"]);
  }

  async function plan() {
    const started = performance.now();
    writeAddress();
    const list = words();
    $("command-text").textContent = ["kvplan"].concat(list).map(shellQuote).join(" ");
    clearErrors();
    if (!$("model").value.trim() || !$("gpu").value.trim()) {
      $("status").textContent = "Give a model and a GPU.";
      return;
    }
    const json = await kvplan.run(list.concat(["--format", "json"]));
    if (json.code !== 0 && json.code !== 1) {
      showError(json.err);
      $("status").textContent = "No answer: see the message above.";
      $("answer").classList.add("stale");
      return;
    }
    const text = view === "table" ? null : await kvplan.run(list);
    last = {words: list, jsonText: json.out, json: KvplanApi.parseExactJson(json.out), text: text ? text.out : null};
    $("answer").classList.remove("stale");
    renderTable(last.json);
    if (view === "text" && last.text === null) last.text = (await kvplan.run(list)).out;
    showView();
    const elapsed = performance.now() - started;
    window.kvplanPage.plans += 1;
    window.kvplanPage.lastPlanMs = elapsed;
    if (window.kvplanPage.firstTableMs === null) window.kvplanPage.firstTableMs = performance.now();
    const rows = last.json.rows;
    $("status").textContent = `${rows.filter((r) => r.fits).length} of ${rows.length} rows fit (planned in ${elapsed.toFixed(1)} ms).`;
    // The chart after the table is on screen: it is a second run, and optional.
    const plot = await kvplan.run(plotWords(list));
    renderChart(plot.code === 0 ? plot.out : null);
  }

  function schedule() {
    planning = planning.then(plan).catch((error) => {
      $("general-error").textContent = `kvplan: error: ${error.message}`;
    });
    return planning;
  }
  window.kvplanPage.settled = () => planning;
  // What the page read of each dropped GGUF (the browser test checks it never reads one whole).
  window.kvplanPage.slices = () => [...kvplan.slices.values()].map((s) => ({cached: s.cached, size: s.blob.size}));

  // ---- wiring -------------------------------------------------------------------------------

  async function loadLists() {
    const models = await kvplan.run(["models", "--format", "json"]);
    if (models.code === 0) {
      const list = $("model-list");
      for (const spec of KvplanApi.parseExactJson(models.out).models || []) {
        const option = document.createElement("option");
        option.value = spec.id;
        option.label = spec.name || spec.id;
        list.appendChild(option);
      }
    }
    const gpus = await kvplan.run(["gpus", "--format", "json"]);
    if (gpus.code === 0) {
      const list = $("gpu-list");
      for (const gpu of KvplanApi.parseExactJson(gpus.out).gpus || []) {
        const option = document.createElement("option");
        option.value = gpu.id;
        option.label = gpu.name;
        list.appendChild(option);
      }
    }
  }

  async function dropFile(file) {
    $("file-error").textContent = "";
    try {
      const path = await kvplan.addFile(file);
      $("model").value = path;
      schedule();
    } catch (error) {
      $("file-error").textContent = `kvplan: error: ${error.message}`;
    }
  }

  async function start() {
    readAddress();
    kvplan = await KvplanApi.Kvplan.load(createKvplan);
    window.kvplanPage.ready = true;
    window.kvplanPage.moduleMs = performance.now();
    await schedule();
    loadLists();

    let timer = null;
    const form = $("plan");
    form.addEventListener("input", (event) => {
      if (event.target.id === "file") return;
      clearTimeout(timer);
      timer = setTimeout(schedule, event.target.tagName === "SELECT" ? 0 : 150);
    });
    form.addEventListener("change", (event) => {
      if (event.target.id === "file" && event.target.files.length) dropFile(event.target.files[0]);
    });
    form.addEventListener("submit", (event) => { event.preventDefault(); schedule(); });
    const drop = $("drop");
    drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (event) => {
      event.preventDefault();
      drop.classList.remove("over");
      if (event.dataTransfer.files.length) dropFile(event.dataTransfer.files[0]);
    });
    for (const name of VIEWS) {
      $(`view-${name}`).addEventListener("click", () => { view = name; schedule(); });
    }
    $("copy").addEventListener("click", async () => {
      const text = $("command-text").textContent;
      try {
        await navigator.clipboard.writeText(text);
        $("status").textContent = "Command copied.";
      } catch (error) {
        // No clipboard (an insecure origin, a denied permission): select the text instead.
        const range = document.createRange();
        range.selectNodeContents($("command-text"));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        $("status").textContent = "Command selected: copy it with Ctrl+C.";
      }
    });
  }

  start().catch((error) => {
    $("general-error").textContent = `kvplan: error: the WebAssembly module did not load: ${error.message}`;
  });
})();
