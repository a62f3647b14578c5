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
  // The questions besides the plan: each a kvplan subcommand, with the form fields it takes (it
  // refuses the others, so they are disabled and left out of its words, kept in the address).
  // advise's --gpus is the list of cards to try, not a count.
  const SUBCOMMANDS = {
    plan: FIELDS,
    max: FIELDS,
    advise: ["model", "gpus", "ctx", "batch", "runtime"],
    fit: ["gpu", "gpus", "used", "budget", "ctx", "batch", "runtime"],
  };
  // What each needs before it can run.
  const REQUIRED = {plan: ["model", "gpu"], max: ["model", "gpu"], advise: ["model"], fit: ["gpu"]};
  // The table's byte columns after ctx, dtype and verdict: the JSON rows' exact integers.
  const BYTE_COLUMNS = ["total_bytes", "headroom_bytes", "capacity_bytes", "kv_bytes", "weights_bytes", "overhead_bytes"];

  const $ = (id) => document.getElementById(id);
  let kvplan = null;
  let view = "table";
  let sub = "plan";     // the question: plan, max, advise or fit (view= in the address)
  let extraWords = [];  // the engine's flags, as words
  let last = null;      // the last answer: {words, json, text}
  let planning = Promise.resolve();
  // What the browser test reads: readiness, plan timings, and where a first visit's time goes
  // (milliseconds since navigation: the page's script runs, the module is compiled and ready,
  // the first plan has run in it, its table is on screen).
  window.kvplanPage = {ready: false, plans: 0, lastPlanMs: null, firstTableMs: null, scriptMs: performance.now(), firstRunMs: null};

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
      if (FIELDS.includes(key) || key === "format" || key === "view") continue;
      extraWords.push(key.startsWith("-") ? key : `--${key}`);
      if (value !== "") extraWords.push(value);
    }
    $("extra").value = extraWords.join(" ");
    const format = params.get("format");
    view = format === "json" ? "json" : format === "text" ? "text" : "table";
    const asked = params.get("view");
    sub = Object.prototype.hasOwnProperty.call(SUBCOMMANDS, asked) ? asked : "plan";
    applySubcommand();
  }

  /// The form for the question: the fields its subcommand refuses disabled, --gpus named for it.
  function applySubcommand() {
    for (const id of FIELDS) $(id).disabled = !SUBCOMMANDS[sub].includes(id);
    $("file").disabled = !SUBCOMMANDS[sub].includes("model");
    const cards = sub === "advise";
    $("gpus-label").textContent = cards ? "Cards to try (4090,l40s,h100)" : "Count";
    $("gpus").inputMode = cards ? "text" : "numeric";
  }

  /// Switching the question by hand: a context list becomes its first context (max, advise and fit
  /// take one), and --gpus a count or a card list as the new question reads it. The form shows it.
  function switchSubcommand(name) {
    const ctx = $("ctx").value.trim();
    if (name !== "plan" && ctx.includes(",")) $("ctx").value = ctx.split(",")[0].trim();
    const gpus = $("gpus").value.trim();
    const isCount = /^\d+$/.test(gpus);
    if (gpus !== "" && (name === "advise") === isCount) $("gpus").value = "";
    sub = name;
    applySubcommand();
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
    if (sub !== "plan") params.set("view", sub);
    if (view !== "table") params.set("format", view);
    const query = params.toString().replace(/%2C/g, ",").replace(/%2B/g, "+");
    const address = `${location.pathname}${query ? "?" + query : ""}`;
    if (address !== `${location.pathname}${location.search}`) history.replaceState(null, "", address);
  }

  /// kvplan's words for the form: the subcommand, every non-empty field it takes as --flag value,
  /// then the engine's flags.
  function words() {
    const list = sub === "plan" ? [] : [sub];
    for (const id of SUBCOMMANDS[sub]) {
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

  /// kvplan plot's SVG, inline (its budget line, markers and hover titles are then part of the
  /// page): parsed as XML, never as HTML, with anything scriptable dropped.
  function renderChart(svg) {
    const box = $("chart-box");
    $("chart").textContent = "";
    const parsed = svg ? new DOMParser().parseFromString(svg, "image/svg+xml") : null;
    const root = parsed ? parsed.documentElement : null;
    if (!root || root.localName !== "svg" || root.getElementsByTagName("parsererror").length) { box.hidden = true; return; }
    for (const element of [...root.querySelectorAll("script, foreignObject")]) element.remove();
    for (const element of [root, ...root.querySelectorAll("*")]) {
      for (const attribute of [...element.attributes]) if (/^on/i.test(attribute.name)) element.removeAttribute(attribute.name);
    }
    root.setAttribute("role", "img");
    root.setAttribute("aria-label", "Memory against context length for each KV cache dtype, with the budget line and the largest context that fits (kvplan plot)");
    $("chart").appendChild(document.importNode(root, true));
    box.hidden = false;
  }

  // ---- max, advise and fit: their JSON documents as tables ----------------------------------

  const orNone = (value) => (value === null || value === undefined ? "none" : groupDigits(value));
  const bytes = (value) => (value === null || value === undefined ? "" : groupDigits(value));
  const deployment = (gpus, tp, pp) => (gpus === null || gpus === undefined ? "none" : `${gpus} (tp ${tp}${pp > 1 ? `, pp ${pp}` : ""})`);

  /// Each question's columns: [heading, is it a number, the cell's text from one entry].
  const SUB_COLUMNS = {
    max: [
      ["KV dtype", false, (r) => r.kv_dtype],
      ["max ctx", true, (r) => orNone(r.max_ctx)],
      ["bound", false, (r) => r.limit_code || r.limit],
      ["max batch", true, (r) => orNone(r.max_batch)],
      ["bound", false, (r) => r.max_batch_limit_code || r.max_batch_limit],
      ["fewest GPUs", false, (r) => deployment(r.min_gpus, r.min_gpus_tp, r.min_gpus_pp)],
    ],
    advise: [
      ["#", true, (r, i) => String(i + 1)],
      ["GPU", false, (r) => r.gpu],
      ["count", true, (r) => groupDigits(r.count)],
      ["tp", true, (r) => groupDigits(r.tp)],
      ["pp", true, (r) => groupDigits(r.pp)],
      ["weights", false, (r) => r.weight_dtype],
      ["KV dtype", false, (r) => r.kv_dtype],
      ["$/h", true, (r) => (r.price_per_hour === null ? "" : `${r.price_approximate ? "~" : ""}${r.price_per_hour}`)],
      ["price date", false, (r) => r.price_date || "undated"],
      ["total bytes", true, (r) => bytes(r.total_bytes)],
      ["capacity bytes", true, (r) => bytes(r.capacity_bytes)],
      ["headroom bytes", true, (r) => bytes(r.headroom_bytes)],
    ],
    fit: [
      ["#", true, (r, i) => String(i + 1)],
      ["model", false, (r) => r.model.id],
      ["params", true, (r) => groupDigits(r.model.params)],
      ["weights", false, (r) => r.weights.format],
      ["KV dtype", false, (r) => r.kv_dtype],
      ["quality", false, (r) => r.quality],
      ["total bytes", true, (r) => bytes(r.row.total_bytes)],
      ["headroom bytes", true, (r) => bytes(r.row.headroom_bytes)],
      ["max ctx", true, (r) => orNone(r.max_ctx)],
      ["bound", false, (r) => r.max_ctx_stop.code || r.max_ctx_stop.bound],
      ["max batch", true, (r) => orNone(r.max_batch)],
    ],
  };

  /// The entries a question's table shows, its caption, and the lines above it.
  function subAnswer(json) {
    const gpu = json.gpu || {};
    const onGpu = gpu.name ? ` on ${gpu.count > 1 ? gpu.count + " x " : ""}${gpu.name}: ${groupDigits(gpu.memory_bytes)} bytes (${gpu.memory_basis})` : "";
    if (sub === "max") {
      return {
        entries: json.results,
        caption: `Per KV dtype: the largest context at batch ${groupDigits(json.batch)} (up to ${groupDigits(json.max_ctx_cap)}, ${json.cap.replace(/_/g, " ")}), the largest batch at ctx ${groupDigits(json.ctx)} and the fewest GPUs. Each fits; one more token, sequence (or one GPU fewer) does not.`,
        lines: [`${json.model.name || json.model.id}${onGpu}, runtime ${json.runtime}.`, json.settings.budget_rule],
        status: `${json.results.filter((r) => r.max_ctx !== null).length} of ${json.results.length} KV dtypes fit.`,
      };
    }
    if (sub === "advise") {
      const request = json.request;
      return {
        entries: json.configs,
        caption: "The cheapest configurations that fit, cheapest first: memory per GPU (the fullest one); prices approximate USD per GPU-hour with their dates.",
        lines: [`${json.model.name || json.model.id} at ctx ${groupDigits(request.ctx)}, batch ${groupDigits(request.batch)}, runtime ${request.runtime}, quality ${request.quality}.`,
          `${groupDigits(json.tried)} configurations tried, ${groupDigits(json.fit_count)} fit, ${groupDigits(json.not_offered)} not offered by the engine.`],
        status: `${json.configs.length} of ${json.fit_count} configurations that fit shown.`,
      };
    }
    return {
      entries: json.shown.map((index) => json.rows[index]),
      caption: `What runs here, best first (${json.ranking_rule}); memory per GPU (the fullest one).`,
      lines: [`Every catalog model${onGpu}, runtime ${json.runtime}, at ctx ${groupDigits(json.ctx)} x batch ${groupDigits(json.batch)}, quality up to ${json.quality}.`,
        json.settings.budget_rule],
      status: `${json.best.length} of ${groupDigits(json.models_evaluated)} models fit (${json.fitting.length} of ${json.rows.length} rows); ${json.shown.length} shown.`,
    };
  }

  function renderSub(json) {
    const answer = subAnswer(json);
    const columns = SUB_COLUMNS[sub];
    $("sub-caption").textContent = answer.caption;
    const head = $("sub-table").querySelector("thead");
    head.textContent = "";
    const headRow = document.createElement("tr");
    for (const [heading, numeric] of columns) {
      const th = cell("th", heading, numeric ? "num" : "");
      th.scope = "col";
      headRow.appendChild(th);
    }
    head.appendChild(headRow);
    const body = $("sub-table").querySelector("tbody");
    body.textContent = "";
    answer.entries.forEach((entry, index) => {
      const tr = document.createElement("tr");
      for (const [, numeric, text] of columns) tr.appendChild(cell("td", text(entry, index), numeric ? "num" : ""));
      body.appendChild(tr);
    });
    const summary = $("summary");
    summary.textContent = "";
    for (const line of answer.lines) summary.appendChild(cell("p", line));
    return answer.status;
  }

  function showView() {
    for (const name of VIEWS) $(`view-${name}`).setAttribute("aria-pressed", String(name === view));
    for (const name of Object.keys(SUBCOMMANDS)) $(`sub-${name}`).setAttribute("aria-pressed", String(name === sub));
    $("table-box").hidden = sub !== "plan";
    $("sub-box").hidden = sub === "plan";
    if (sub !== "plan") { $("chart-box").hidden = true; $("rule").textContent = ""; }
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
    const missing = REQUIRED[sub].filter((id) => !$(id).value.trim());
    if (missing.length) {
      $("status").textContent = `Give ${missing.map((id) => (id === "gpu" ? "a GPU" : "a model")).join(" and ")}.`;
      showView();
      return;
    }
    const json = await kvplan.run(list.concat(["--format", "json"]));
    if (window.kvplanPage.firstRunMs === null) window.kvplanPage.firstRunMs = performance.now() - started;
    if (json.code !== 0 && json.code !== 1) {
      showError(json.err);
      $("status").textContent = "No answer: see the message above.";
      $("answer").classList.add("stale");
      return;
    }
    const text = view === "table" ? null : await kvplan.run(list);
    last = {words: list, jsonText: json.out, json: KvplanApi.parseExactJson(json.out), text: text ? text.out : null};
    $("answer").classList.remove("stale");
    const subStatus = sub === "plan" ? (renderTable(last.json), null) : renderSub(last.json);
    showView();
    const elapsed = performance.now() - started;
    window.kvplanPage.plans += 1;
    window.kvplanPage.lastPlanMs = elapsed;
    const planned = `planned in ${elapsed.toFixed(1)} ms`;
    const rows = sub === "plan" ? last.json.rows : null;
    $("status").textContent = rows ? `${rows.filter((r) => r.fits).length} of ${rows.length} rows fit (${planned}).` : `${subStatus} (${planned})`;
    // A module run holds the main thread: the answer is painted before anything else runs (the
    // chart, the catalog lists), and the first table's time is that frame's.
    const painted = await paintedFrame();
    if (window.kvplanPage.firstTableMs === null) window.kvplanPage.firstTableMs = painted;
    if (!rows) return;
    // The chart after the table is on screen: it is a second run, and optional.
    const plot = await kvplan.run(plotWords(list));
    renderChart(plot.code === 0 ? plot.out : null);
  }

  /// Resolves after the browser has painted what the DOM holds now, to the time of that frame's
  /// callback (the frame's own timestamp can be older: it may be taken while a run held the thread).
  function paintedFrame() {
    return new Promise((resolve) => requestAnimationFrame(() => {
      const now = performance.now();
      setTimeout(() => resolve(now), 0);
    }));
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

  // The catalogs' lists are read when their field is first used, not on the first visit: listing
  // every model is the module's longest run (0.2-0.8 s the first time on a busy 2-core machine).
  function loadModels(modelPicker) {
    const models = kvplan.runOnce(["models", "--format", "json"]);
    if (models.code === 0) {
      modelPicker.setEntries((KvplanApi.parseExactJson(models.out).models || []).map((spec) =>
        ({value: spec.id, label: spec.name || spec.id, keys: spec.aliases || []})));
    }
  }

  function loadGpus() {
    const gpus = kvplan.runOnce(["gpus", "--format", "json"]);
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
    const modelPicker = KvplanCombobox.attach($("model"), $("model-options"), () => schedule());
    $("model").addEventListener("focus", () => loadModels(modelPicker), {once: true});
    $("gpu").addEventListener("focus", loadGpus, {once: true});
    await schedule();

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
    for (const name of Object.keys(SUBCOMMANDS)) {
      $(`sub-${name}`).addEventListener("click", () => { switchSubcommand(name); schedule(); });
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
