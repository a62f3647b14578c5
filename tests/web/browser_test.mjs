// The page in a real browser: Debian's headless Chromium (/usr/bin/chromium, never a downloaded
// one) driven by playwright-core, the page served from a local static server. It opens a shared
// link and checks its table and its JSON view against the native CLI, fills the form by keyboard,
// drops a sparse multi-GiB GGUF, triggers each bad-input message, runs axe-core, checks the 375 px
// layout and the budgets (folder <= 1 MB gzipped, first table < 1 s, re-plan < 50 ms) and saves a
// screenshot. Any console error or uncaught exception fails it.
//
//   node tests/web/browser_test.mjs --web build-wasm/web --kvplan build/kvplan [--screenshot docs/web.png]
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import {createRequire} from "node:module";
import {fileURLToPath} from "node:url";

import {writeLlamaGguf} from "./gguf.mjs";
import {serve} from "./serve.mjs";

const require = createRequire(import.meta.url);
const {chromium} = require("playwright-core");

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const webDir = path.resolve(root, option("--web", "build-wasm/web"));
const binary = path.resolve(root, option("--kvplan", "build/kvplan"));
const screenshot = path.resolve(root, option("--screenshot", path.join(path.dirname(webDir), "test-artifacts", "web.png")));
const chromiumPath = option("--chromium", "/usr/bin/chromium");

const GZIP_BUDGET = 1000 * 1000;  // the issue's 1 MB: 10^6 bytes, as kvplan counts a MB
const FIRST_TABLE_BUDGET_MS = 1000;
const REPLAN_BUDGET_MS = 50;

let failures = 0;
function check(condition, what, detail = "") {
  console.log(`${condition ? "ok  " : "FAIL"} ${what}${detail ? ": " + detail : ""}`);
  if (!condition) failures += 1;
}

function cli(words) {
  const result = spawnSync(binary, words, {cwd: root, encoding: "utf8", env: {PATH: "/usr/bin:/bin"}, maxBuffer: 64 << 20});
  return {code: result.status, out: result.stdout, err: result.stderr};
}

/// The native CLI's rows as the page shows them: ctx, dtype, the byte columns grouped, the verdict.
function expectedRows(json) {
  const group = (digits) => String(digits).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const text = json.replace(/("[a-z_]*bytes[a-z_]*"|"ctx"): (-?\d+)/g, '$1: "$2"');  // exact digits
  return JSON.parse(text).rows.map((row) => [group(row.ctx), row.kv_dtype, `${row.fits ? "✓" : "✗"} ${row.verdict.replace(/_/g, " ")}`,
    ...["total_bytes", "headroom_bytes", "capacity_bytes", "kv_bytes", "weights_bytes", "overhead_bytes"].map((k) => (row[k] === null ? "" : group(row[k])))]);
}

async function pageRows(page, table = "#fit") {
  return page.$$eval(`${table} tbody tr`, (rows) => rows.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
}

/// The JSON document with every integer of 16 digits or more as a string (as the page keeps them).
function exactJson(text) {
  return JSON.parse(text.replace(/([:\[,]\s*)(-?\d{16,})(?=\s*[,\]}\n])/g, '$1"$2"'));
}

/// What the max, advise and fit views must show for the CLI's JSON document: the table's cells,
/// written here from the document's fields (docs/web.md "The page").
const subGroup = (value) => (value === null ? "none" : String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ","));
const EXPECTED_SUB_ROWS = {
  max: (doc) => doc.results.map((r) => [r.kv_dtype, subGroup(r.max_ctx), r.limit_code || r.limit, subGroup(r.max_batch),
    r.max_batch_limit_code || r.max_batch_limit, r.min_gpus === null ? "none" : `${r.min_gpus} (tp ${r.min_gpus_tp}${r.min_gpus_pp > 1 ? `, pp ${r.min_gpus_pp}` : ""})`]),
  advise: (doc) => doc.configs.map((c, i) => [String(i + 1), c.gpu, String(c.count), String(c.tp), String(c.pp), c.weight_dtype, c.kv_dtype,
    c.price_per_hour === null ? "" : `${c.price_approximate ? "~" : ""}${c.price_per_hour}`, c.price_date || "undated",
    subGroup(c.total_bytes), subGroup(c.capacity_bytes), subGroup(c.headroom_bytes)]),
  fit: (doc) => doc.shown.map((index, i) => {
    const r = doc.rows[index];
    return [String(i + 1), r.model.id, subGroup(r.model.params), r.weights.format, r.kv_dtype, r.quality, subGroup(r.row.total_bytes),
      subGroup(r.row.headroom_bytes), subGroup(r.max_ctx), r.max_ctx_stop.code || r.max_ctx_stop.bound, subGroup(r.max_batch)];
  }),
};

function sameRows(actual, expected) {
  return JSON.stringify(actual) === JSON.stringify(expected);
}

async function settle(page) {
  await page.waitForFunction(() => window.kvplanPage && window.kvplanPage.ready);
  await page.evaluate(() => window.kvplanPage.settled());
  // A typed change is planned after a short pause: wait for it, then for the plan.
  await page.waitForTimeout(250);
  await page.evaluate(() => window.kvplanPage.settled());
}

function gzippedSize(folder) {
  let total = 0;
  for (const name of fs.readdirSync(folder)) {
    const file = path.join(folder, name);
    if (fs.statSync(file).isFile()) total += zlib.gzipSync(fs.readFileSync(file), {level: 9}).length;
  }
  return total;
}

async function main() {
  for (const file of [binary, path.join(webDir, "index.html"), path.join(webDir, "kvplan.wasm"), chromiumPath]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing`);
  }
  const gz = gzippedSize(webDir);
  check(gz <= GZIP_BUDGET, "the folder gzipped is at most 1 MB (10^6 bytes)", `${gz} bytes`);

  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "kvplan-browser-"));
  const ggufPath = path.join(temp, "llama-3.1-8b-q4_k_m.gguf");
  const {fileBytes} = writeLlamaGguf(ggufPath);
  const truncatedPath = path.join(temp, "truncated.gguf");
  const head = Buffer.alloc(4096);
  const fd = fs.openSync(ggufPath, "r");
  fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
  fs.writeFileSync(truncatedPath, head);
  const badConfigPath = path.join(temp, "config.json");
  fs.writeFileSync(badConfigPath, '{"model_type": "llama", "num_hidden_layers": 32,\n');

  const server = await serve(webDir);
  const base = `http://127.0.0.1:${server.address().port}/index.html`;
  const context = await chromium.launchPersistentContext(path.join(temp, "profile"), {
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
    viewport: {width: 1200, height: 900},
  });
  const page = context.pages()[0] || await context.newPage();
  const problems = [];
  page.on("console", (message) => { if (message.type() === "error") problems.push(`console: ${message.text()}`); });
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));

  try {
    // 1. A shared link in the CLI's flag names gives the CLI's rows.
    const link = "model=llama3.1-8b&ctx=32k,64k,128k&gpu=4090&kv-dtype=fp16,fp8&runtime=vllm";
    const linkWords = ["--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "32k,64k,128k", "--kv-dtype", "fp16,fp8", "--runtime", "vllm"];
    await page.goto(`${base}?${link}`);
    await page.waitForSelector("#fit tbody tr");
    await settle(page);
    // The first visit also starts the browser's renderer and compiles the module cold; the budget
    // is for a visit with the browser running (the module's code then comes from its cache).
    // Where a first visit's time goes, in ms since navigation (docs/web.md "Limits").
    const cold = await page.evaluate(() => {
      const entry = (suffix) => performance.getEntriesByType("resource").find((e) => e.name.endsWith(suffix));
      const timings = window.kvplanPage;
      return {html: performance.getEntriesByType("navigation")[0].responseEnd, "kvplan.js": entry("kvplan.js").responseEnd,
        "wasm fetched": entry("kvplan.wasm").responseEnd, "page script": timings.scriptMs, "module ready": timings.moduleMs,
        "first run": timings.moduleMs + timings.firstRunMs, "table painted": timings.firstTableMs};
    });
    console.log(`     first visit (cold renderer and module): ${Object.entries(cold).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")} ms`);
    await page.goto(`${base}?${link}`);
    await page.waitForSelector("#fit tbody tr");
    await settle(page);
    const [firstTable, moduleReady] = await page.evaluate(() => [window.kvplanPage.firstTableMs, window.kvplanPage.moduleMs]);
    check(firstTable < FIRST_TABLE_BUDGET_MS, "first table on screen within 1 s of navigation (browser running)",
      `${firstTable.toFixed(0)} ms (the module ready at ${moduleReady.toFixed(0)} ms)`);
    const native = cli([...linkWords, "--format", "json"]);
    check(sameRows(await pageRows(page), expectedRows(native.out)), "a shared link's table equals the CLI's rows");
    check((await page.textContent("#command-text")).startsWith("kvplan --model llama3.1-8b --gpu 4090 --ctx 32k,64k,128k --kv-dtype fp16,fp8 --runtime vllm"),
      "the copy-command line is the CLI's", await page.textContent("#command-text"));

    // 2. format=json is the CLI's document, byte for byte.
    await page.goto(`${base}?${link}&format=json`);
    await page.waitForFunction(() => document.getElementById("text").textContent.length > 0);
    check((await page.textContent("#text")) === native.out, "format=json shows the CLI's JSON byte for byte");

    // 2b. max, advise and fit: each a view of its own (view= in the address), its table the CLI's
    // JSON document for the same flags, its format=json view that document byte for byte.
    const subLinks = [
      ["max", "model=llama3.1-8b&gpu=4090&ctx=32k&kv-dtype=fp16,fp8&runtime=vllm",
        ["max", "--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "32k", "--kv-dtype", "fp16,fp8", "--runtime", "vllm"]],
      ["advise", "model=llama3.1-8b&gpus=4090,l40s,h100&ctx=32k&batch=4&runtime=vllm",
        ["advise", "--model", "llama3.1-8b", "--gpus", "4090,l40s,h100", "--ctx", "32k", "--batch", "4", "--runtime", "vllm"]],
      ["fit", "gpu=4090&ctx=16k&runtime=llama.cpp&top=8", ["fit", "--gpu", "4090", "--ctx", "16k", "--runtime", "llama.cpp", "--top", "8"]],
    ];
    for (const [name, query, subWords] of subLinks) {
      const subNative = cli([...subWords, "--format", "json"]);
      await page.goto(`${base}?${query}&view=${name}`);
      await settle(page);
      const shown = await pageRows(page, "#sub-table");
      const expected = EXPECTED_SUB_ROWS[name](exactJson(subNative.out));
      check(subNative.code === 0 && expected.length > 0 && sameRows(shown, expected), `view=${name}'s table equals the CLI's JSON`,
        `${shown.length} rows, the CLI's ${expected.length}`);
      check((await page.textContent("#command-text")) === `kvplan ${subWords.join(" ")}`, `view=${name}'s command is the CLI's`,
        await page.textContent("#command-text"));
      await page.goto(`${base}?${query}&view=${name}&format=json`);
      await page.waitForFunction(() => document.getElementById("text").textContent.length > 0);
      check((await page.textContent("#text")) === subNative.out, `view=${name}&format=json shows the CLI's JSON byte for byte`);
    }
    // From the plan's link by its button: the context list becomes its first context (max takes one).
    await page.goto(`${base}?${link}`);
    await settle(page);
    await page.click("#sub-max");
    await settle(page);
    const maxFromButton = EXPECTED_SUB_ROWS.max(exactJson(cli(["max", ...linkWords.map((w) => (w === "32k,64k,128k" ? "32k" : w)), "--format", "json"]).out));
    check(sameRows(await pageRows(page, "#sub-table"), maxFromButton) && new URL(page.url()).searchParams.get("view") === "max" &&
      new URL(page.url()).searchParams.get("ctx") === "32k", "the max button plans max at the first context", new URL(page.url()).search);

    // 2c. The chart: kvplan plot's SVG inline, with the budget line at the plan's capacity and,
    // per KV dtype, the largest context that fits marked at its x (the frame's x + its width x
    // max ctx / the axis' last context).
    await page.goto(`${base}?${link}`);
    await settle(page);
    await page.waitForSelector("#chart svg");
    const nativePlan = exactJson(native.out);
    const chart = await page.evaluate(() => {
      const svg = document.querySelector("#chart svg");
      return {
        ctxEnd: Number(svg.getAttribute("data-ctx-end")),
        series: [...svg.querySelectorAll("g.series")].map((g) => {
          const frame = g.querySelector("rect[fill=none]");
          const budget = g.querySelector("line.capacity");
          const marker = g.querySelector("line.max-ctx");
          return {
            dtype: g.getAttribute("data-kv-dtype"),
            frameX: Number(frame.getAttribute("x")), frameWidth: Number(frame.getAttribute("width")),
            budgetBytes: budget ? budget.getAttribute("data-bytes") : null,
            markerCtx: marker ? marker.getAttribute("data-ctx") : null, markerX: marker ? Number(marker.getAttribute("x1")) : null,
          };
        }),
      };
    });
    check(chart.series.length === nativePlan.max_ctx_by_kv_dtype.length, "the chart has a panel per KV dtype", `${chart.series.length}`);
    for (const limit of nativePlan.max_ctx_by_kv_dtype) {
      const panel = chart.series.find((p) => p.dtype === limit.kv_dtype) || {};
      check(panel.budgetBytes === String(nativePlan.rows[0].capacity_bytes), `the chart's ${limit.kv_dtype} budget line is the capacity`,
        `${panel.budgetBytes} bytes`);
      const x = panel.frameX + (panel.frameWidth * limit.max_ctx) / chart.ctxEnd;
      check(panel.markerCtx === String(limit.max_ctx) && Math.abs(panel.markerX - x) <= 0.1,
        `the chart marks where ${limit.kv_dtype} stops fitting`, `ctx ${panel.markerCtx} at x ${panel.markerX} (${x.toFixed(1)} expected)`);
    }

    // 3. The form by keyboard: every field reachable with Tab, typed, planned like the CLI.
    await page.goto(`${base}`);
    await settle(page);
    await page.focus("#model");
    const typed = {model: "qwen3-8b", file: null, "weight-dtype": "", gpu: "h100", gpus: "2", used: "1GiB", budget: "", ctx: "16k,64k", batch: "4", "kv-dtype": "fp16,fp8"};
    for (const [id, value] of Object.entries(typed)) {
      const focused = await page.evaluate(() => document.activeElement.id);
      check(focused === id, `Tab reaches ${id}`, focused);
      if (value !== null) {
        await page.keyboard.press("Control+A");
        await page.keyboard.press("Delete");
        if (value) await page.keyboard.type(value);
      }
      await page.keyboard.press("Tab");
    }
    check((await page.evaluate(() => document.activeElement.id)) === "runtime", "Tab reaches the engine");
    await page.keyboard.press("ArrowDown");  // llama.cpp
    await page.keyboard.press("ArrowDown");  // vllm
    await settle(page);
    const formWords = ["--model", "qwen3-8b", "--gpu", "h100", "--gpus", "2", "--used", "1GiB", "--ctx", "16k,64k", "--batch", "4", "--kv-dtype", "fp16,fp8", "--runtime", "vllm"];
    check(sameRows(await pageRows(page), expectedRows(cli([...formWords, "--format", "json"]).out)), "the keyboard-filled form's table equals the CLI's rows");
    check(new URL(page.url()).search === "?model=qwen3-8b&gpu=h100&gpus=2&used=1GiB&ctx=16k,64k&batch=4&kv-dtype=fp16,fp8&runtime=vllm",
      "the address holds the form in the CLI's flag names", new URL(page.url()).search);

    // 3b. The model picker, an ARIA combobox: typing a Hugging Face id's start lists the catalog
    // models whose ids, names or aliases hold it; Down moves through them, Enter takes one.
    await page.goto(`${base}?gpu=4090&ctx=32k`);
    await settle(page);
    await page.focus("#model");
    await page.keyboard.type("Qwen/Qwen3-8");
    const combo = await page.evaluate(() => ({
      role: document.getElementById("model").getAttribute("role"),
      expanded: document.getElementById("model").getAttribute("aria-expanded"),
      controls: document.getElementById("model").getAttribute("aria-controls"),
      options: [...document.querySelectorAll("#model-options [role=option]")].map((o) => o.dataset.value),
    }));
    check(combo.role === "combobox" && combo.expanded === "true" && combo.controls === "model-options" && combo.options.includes("qwen3-8b"),
      "typing a Hugging Face id lists the catalog models it names", combo.options.join(", "));
    let picked = null;
    for (let i = 0; i < combo.options.length && picked !== "qwen3-8b"; i++) {
      await page.keyboard.press("ArrowDown");
      picked = await page.evaluate(() => {
        const id = document.getElementById("model").getAttribute("aria-activedescendant");
        const option = id && document.getElementById(id);
        return option && option.getAttribute("aria-selected") === "true" ? option.dataset.value : null;
      });
    }
    check(picked === "qwen3-8b", "Down highlights an option (aria-activedescendant)", String(picked));
    await page.keyboard.press("Enter");
    await settle(page);
    check((await page.inputValue("#model")) === "qwen3-8b" && (await page.getAttribute("#model", "aria-expanded")) === "false" &&
      sameRows(await pageRows(page), expectedRows(cli(["--model", "qwen3-8b", "--gpu", "4090", "--ctx", "32k", "--format", "json"]).out)),
      "Enter takes the option, closes the list and plans it like the CLI", await page.inputValue("#model"));
    await page.fill("#model", "meta-llama/Llama-3.1-8B");
    await page.keyboard.press("Escape");
    await settle(page);
    check(sameRows(await pageRows(page), expectedRows(cli(["--model", "meta-llama/Llama-3.1-8B", "--gpu", "4090", "--ctx", "32k", "--format", "json"]).out)),
      "a Hugging Face id typed whole plans like the CLI");

    // 4. A re-plan after an input change: the median of five changes, so that one stall of a busy
    // machine (a collection, another process) does not decide the budget; every one is printed.
    const replans = [];
    for (const batch of ["2", "3", "4", "5", "8"]) {
      await page.fill("#batch", batch);
      await settle(page);
      replans.push(await page.evaluate(() => window.kvplanPage.lastPlanMs));
    }
    const replan = [...replans].sort((a, b) => a - b)[2];
    check(replan < REPLAN_BUDGET_MS, "a re-plan after an input change takes under 50 ms (median of 5)",
      replans.map((ms) => ms.toFixed(1)).join(", ") + " ms");

    // 5. A rule behind a figure, on click (tap) and on hover (the title).
    await page.click("#fit tbody tr:first-child button");
    const rule = await page.textContent("#rule");
    check(rule.includes("weights: "), "a row's rules appear on tap", rule.slice(0, 80));

    // 6. A sparse multi-GiB GGUF, dropped: read through slices, planned like the CLI.
    await page.goto(`${base}?gpu=4090&ctx=32k`);
    await settle(page);
    await page.setInputFiles("#file", ggufPath);
    await page.waitForFunction(() => document.getElementById("model").value.startsWith("/uploads/"));
    await settle(page);
    const ggufNative = cli(["--model", ggufPath, "--gpu", "4090", "--ctx", "32k", "--format", "json"]);
    check(sameRows(await pageRows(page), expectedRows(ggufNative.out)), `a dropped ${fileBytes}-byte GGUF gives the CLI's rows`);
    const slices = await page.evaluate(() => window.kvplanPage.slices());
    check(slices.length === 1 && slices[0].cached < slices[0].size, "the GGUF was read through a prefix, never whole",
      slices.map((s) => `${s.cached} of ${s.size} bytes`).join(", "));

    // 7. Bad input: the CLI's own line beside the field, and the page keeps working.
    const bad = [
      ["model", "llama3.1-8x", ["--model", "llama3.1-8x", "--gpu", "4090"]],
      ["gpu", "4091", ["--model", "llama3.1-8b", "--gpu", "4091"]],
      ["ctx", "12q", ["--model", "llama3.1-8b", "--gpu", "4090", "--ctx", "12q"]],
      ["used", "3", ["--model", "llama3.1-8b", "--gpu", "4090", "--used", "3"]],
      ["batch", "0", ["--model", "llama3.1-8b", "--gpu", "4090", "--batch", "0"]],
      ["kv-dtype", "fp9", ["--model", "llama3.1-8b", "--gpu", "4090", "--kv-dtype", "fp9"]],
    ];
    for (const [id, value, words] of bad) {
      await page.goto(`${base}?model=llama3.1-8b&gpu=4090`);
      await settle(page);
      await page.fill(`#${id}`, value);
      await settle(page);
      const expected = cli(words).err.trim();
      const shown = (await page.textContent(`#${id}-error`)).trim();
      check(expected.startsWith("kvplan: error: ") && shown === expected, `bad ${id} shows the CLI's line beside the field`, shown);
    }
    for (const [file, words] of [[badConfigPath, ["--model", badConfigPath, "--gpu", "4090"]], [truncatedPath, ["--model", truncatedPath, "--gpu", "4090"]]]) {
      await page.goto(`${base}?gpu=4090`);
      await settle(page);
      await page.setInputFiles("#file", file);
      await page.waitForFunction(() => document.getElementById("model").value.startsWith("/uploads/"));
      await settle(page);
      const expected = cli(words).err.trim().split(file).join(`/uploads/${path.basename(file)}`);
      const shown = (await page.textContent("#file-error")).trim();
      check(shown === expected, `a bad ${path.basename(file)} shows the CLI's line`, shown);
    }
    await page.fill("#model", "llama3.1-8b");
    await settle(page);
    check((await page.$$("#fit tbody tr")).length > 0, "after bad input the page still plans");

    // 8. Accessibility (axe-core: no serious or critical finding) and the 375 px layout.
    await page.goto(`${base}?${link}`);
    await settle(page);
    await page.addScriptTag({path: require.resolve("axe-core/axe.min.js")});
    const violations = await page.evaluate(async () => (await window.axe.run(document)).violations
      .filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.nodes.length} nodes`));
    check(violations.length === 0, "axe-core finds nothing serious or critical", violations.join("; "));
    // Again on a question's view, with the model combobox's list open.
    await page.goto(`${base}?${subLinks[1][1]}&view=advise`);
    await settle(page);
    await page.focus("#model");
    await page.keyboard.press("Control+A");
    await page.keyboard.type("qwen");
    await page.keyboard.press("ArrowDown");
    await page.addScriptTag({path: require.resolve("axe-core/axe.min.js")});
    const openViolations = await page.evaluate(async () => (await window.axe.run(document)).violations
      .filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.nodes.length} nodes`));
    check(openViolations.length === 0 && (await page.getAttribute("#model", "aria-expanded")) === "true",
      "axe-core finds nothing serious or critical in view=advise with the combobox open", openViolations.join("; "));
    await page.goto(`${base}?${link}`);
    await settle(page);
    await page.screenshot({path: screenshot, fullPage: true});
    console.log(`     screenshot: ${screenshot}`);
    await page.setViewportSize({width: 375, height: 800});
    await page.waitForTimeout(100);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 375, "no horizontal scrolling of the page at 375 px", `${width} px`);

    check(problems.length === 0, "no console error and no uncaught exception", problems.join(" | "));
  } finally {
    await context.close();
    server.close();
    fs.rmSync(temp, {recursive: true, force: true});
  }
  console.log(failures === 0 ? "browser test: all checks passed" : `browser test: ${failures} checks failed`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(`browser_test: ${error.stack || error}`);
  process.exit(2);
});
