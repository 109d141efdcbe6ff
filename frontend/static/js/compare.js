// compare.js — the compare page (/compare/?runs=…), drawn from the compare API
// (GET /api/compare/ and /api/compare/samples/), the same answer a notebook gets.
//
// Charts are drawn by charts.js, one line per run, against the x the API was asked for (step,
// wall time or samples seen: charts.js takes the axis label and tick format as options); all
// charts share the hover cursor and zoom. The settings (x axis, smoothing, metrics) are kept in
// the address, so a view can be shared. When everything is drawn, #compare gets
// data-state="ready" and the page a performance mark "grpo:compare-ready" (read by tests and
// bench/compare.py).
(function () {
  "use strict";

  const { element, fetchJson, formatNumber, formatDuration } = window.PageKit;
  const Metric = window.MetricNames;
  const COLORS = ["#3556d8", "#d8553b", "#2f9e6e", "#9b51e0", "#c29100", "#0095b6", "#e0457b", "#5b6475"];
  const READY_MARK = "grpo:compare-ready";
  const CHART_HEIGHT = 220;
  const SYNC_KEY = "compare"; // charts.js group: shared cursor and zoom
  const root = document.getElementById("compare");
  if (!root) return;
  const page = JSON.parse(document.getElementById("compare-data").textContent);
  const params = new URLSearchParams(window.location.search);
  const state = {
    x: params.get("x") || "step",
    metrics: (params.get("metrics") || "").split(",").filter(Boolean),
    metricsChosen: params.has("metrics"),  // only a choice made here goes into the address
    smooth: Math.min(Math.max(Number(params.get("smooth")) || 0, 0), 0.98),
    comparison: null,
    charts: new Map(), // metric name -> charts.js chart
    sort: { key: null, direction: 1 },
  };

  // --- small helpers ------------------------------------------------------------------------

  function byId(id) {
    return document.getElementById(id);
  }

  function colorOf(runId) {
    return COLORS[page.runs.indexOf(Number(runId)) % COLORS.length];
  }

  function formatSetting(value) {
    if (value === undefined) return "not set";
    if (value === null) return "none";
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  // --- loading and the address --------------------------------------------------------------

  function comparisonUrl() {
    const query = new URLSearchParams({ runs: page.runs.join(","), x: state.x, points: page.points });
    if (state.metrics.length) query.set("metrics", state.metrics.join(","));
    return `${page.api}?${query}`;
  }

  /* The address keeps commas readable (runs=3,5,7), as people type and share it. */
  function rememberSettings() {
    const list = (values) => values.map(encodeURIComponent).join(",");
    const parts = [`runs=${list(page.runs.map(String))}`];
    if (state.x !== "step") parts.push(`x=${encodeURIComponent(state.x)}`);
    if (state.metricsChosen) parts.push(`metrics=${list(state.metrics)}`);
    if (state.smooth) parts.push(`smooth=${state.smooth}`);
    window.history.replaceState(null, "", `${window.location.pathname}?${parts.join("&")}`);
  }

  function showStatus(kind, message) {
    const status = byId("compare-status");
    status.textContent = message;
    status.classList.toggle("error", kind === "error");
    root.dataset.state = kind;
  }

  async function loadComparison() {
    showStatus("loading", "Loading the comparison…");
    try {
      state.comparison = await fetchJson(comparisonUrl());
      state.metrics = state.comparison.metrics;
      renderComparison();
      rememberSettings();
      requestAnimationFrame(() => {
        showStatus("ready", "");
        if (window.performance && performance.mark) performance.mark(READY_MARK);
      });
    } catch (error) {
      showStatus("error", `Could not load the comparison: ${error.message}`);
    }
  }

  function renderComparison() {
    colorLegend();
    renderMetricPicker();
    renderCharts();
    renderSummary();
    renderDiff();
  }

  function colorLegend() {
    for (const item of byId("run-legend").querySelectorAll("li[data-run]")) {
      item.querySelector(".swatch").style.background = colorOf(item.dataset.run);
    }
  }

  // --- metric picker ------------------------------------------------------------------------

  function renderMetricPicker() {
    const options = byId("metric-options");
    const shown = new Set(state.metrics);
    // Re-rendered after each toggle: a keyboard user keeps their place on the same metric.
    const focused = options.contains(document.activeElement) ? document.activeElement.value : null;
    const available = [...new Set([...state.comparison.available_metrics, ...state.metrics])].sort();
    options.querySelectorAll(".metric-option").forEach((node) => node.remove());
    available.forEach((name, index) => {
      const id = `metric-${index}`;
      const box = element("input", { type: "checkbox", id, value: name });
      box.checked = shown.has(name);
      options.append(element("div", { class: "metric-option" }, box, element("label", { for: id, text: name })));
      if (name === focused) box.focus();
    });
    byId("metric-count").textContent = `(${state.metrics.length} of ${available.length})`;
  }

  function onMetricToggled(event) {
    if (!event.target.matches(".metric-option input")) return;
    const picked = [...byId("metric-options").querySelectorAll("input:checked")].map((box) => box.value);
    if (!picked.length) {
      event.target.checked = true;  // at least one chart: unticking the last one is undone
      return;
    }
    state.metrics = picked;
    state.metricsChosen = true;
    loadComparison();
  }

  // --- charts (charts.js) -------------------------------------------------------------------

  /* Exponential moving average over a run's points (gaps skipped), debiased at the start. */
  function smoothed(values, weight) {
    if (!weight) return values;
    let average = 0, count = 0;
    return values.map((value) => {
      if (value === null || !Number.isFinite(value)) return null;
      count += 1;
      average = average * weight + (1 - weight) * value;
      return average / (1 - Math.pow(weight, count));
    });
  }

  /* The x axis the comparison was computed for: wall time as h:mm:ss, steps and samples as counts. */
  function xAxis(comparison) {
    const format = comparison.x === "time" ? formatDuration
      : (value) => (Math.abs(value) >= 1e6 ? value.toExponential(2) : String(Math.round(value)));
    return { label: comparison.x_label, format };
  }

  function chartOptions(name) {
    // An evaluation every few hundred steps: its values drawn as dots, not only a line.
    const points = name.startsWith(Metric.EVAL_PREFIX);
    const series = state.comparison.runs.map((run) => ({ key: String(run.id), label: run.name, color: colorOf(run.id), points }));
    return { series, height: CHART_HEIGHT, syncKey: SYNC_KEY, x: xAxis(state.comparison) };
  }

  /* Each run's column against the comparison's x (charts.js's `step` column), smoothed as set. */
  function fillChart(chart, series) {
    for (const run of state.comparison.runs) {
      const key = String(run.id);
      chart.addSeriesData(key, { step: series.x, value: smoothed(series.values[key], state.smooth) });
    }
  }

  function chartFigure(name, series, runsById) {
    const heading = element("h3", { text: name, id: `chart-${name.replace(/[^A-Za-z0-9_-]/g, "-")}` });
    const figure = element("figure", { class: "chart card", "aria-labelledby": heading.id }, heading);
    if (!series.x.length) {
      figure.append(element("p", { class: "empty", text: "None of these runs reported this metric." }));
      return { figure, plotArea: null };
    }
    const plotArea = element("div", { class: "plot", role: "img",
      "aria-label": `${name} of ${state.comparison.runs.length} runs against ${state.comparison.x_label}` });
    figure.append(plotArea);
    const notes = [];
    if (series.missing.length) notes.push(`Not reported by ${series.missing.map((id) => runsById[id].name).join(", ")}.`);
    if (series.downsampled) notes.push("Downsampled: each point stands for several steps.");
    if (notes.length) figure.append(element("figcaption", { class: "muted", text: notes.join(" ") }));
    return { figure, plotArea };
  }

  function renderCharts() {
    const container = byId("charts");
    state.charts.forEach((chart) => chart.destroy());
    state.charts.clear();
    container.replaceChildren();
    const runsById = Object.fromEntries(state.comparison.runs.map((run) => [run.id, run]));
    for (const name of state.comparison.metrics) {
      const series = state.comparison.series[name];
      const { figure, plotArea } = chartFigure(name, series, runsById);
      container.append(figure);
      if (!plotArea) continue;
      const chart = GrpoCharts.createSeriesChart(plotArea, chartOptions(name));
      fillChart(chart, series);
      // charts.js would draw only the charts in view; "ready" promises every chart drawn.
      chart.drawNow();
      state.charts.set(name, chart);
    }
  }

  function redrawSmoothed() {
    for (const [name, chart] of state.charts) fillChart(chart, state.comparison.series[name]);
  }

  // --- summary table ------------------------------------------------------------------------

  const SUMMARY_CELLS = [
    (line) => element("span", {}, element("span", { class: "swatch", "aria-hidden": "true",
      style: `background:${colorOf(line.run)}` }), ` ${line.name}`),
    (line) => element("span", { class: `badge status-${line.status}`, text: line.status }),
    (line) => (line.max_steps ? `${line.steps} / ${line.max_steps}` : String(line.steps)),
    (line) => formatNumber(line.final_reward),
    (line) => formatNumber(line.best_reward),
    (line) => formatDuration(line.duration_s),
    (line) => formatNumber(line.tokens_per_s),
  ];

  function sortedSummary() {
    const lines = [...state.comparison.summary];
    const { key, direction } = state.sort;
    if (!key) return lines;
    return lines.sort((a, b) => {
      const left = a[key], right = b[key];
      if (left === null || left === undefined) return right === null || right === undefined ? 0 : 1;
      if (right === null || right === undefined) return -1;  // blanks last, either way
      const order = typeof left === "string" ? left.localeCompare(right) : left - right;
      return order * direction;
    });
  }

  function renderSummary() {
    const rows = sortedSummary().map((line) => {
      const row = element("tr", { "data-run": line.run });
      SUMMARY_CELLS.forEach((cell, index) => {
        const value = cell(line);
        row.append(element(index === 0 ? "th" : "td", index === 0 ? { scope: "row" } : { class: "number" }, value));
      });
      return row;
    });
    byId("summary-table").querySelector("tbody").replaceChildren(...rows);
    for (const header of byId("summary-table").querySelectorAll("th[aria-sort]")) {
      const key = header.querySelector("button").dataset.key;
      const sorted = key === state.sort.key;
      header.setAttribute("aria-sort", sorted ? (state.sort.direction > 0 ? "ascending" : "descending") : "none");
    }
  }

  function onSortClicked(event) {
    const button = event.target.closest("button[data-key]");
    if (!button || !state.comparison) return;
    const key = button.dataset.key;
    state.sort = { key, direction: state.sort.key === key ? -state.sort.direction : 1 };
    renderSummary();
  }

  // --- config diff --------------------------------------------------------------------------

  function settingCell(value) {
    const text = formatSetting(value);
    return text.length > 120 || text.includes("\n")
      ? element("td", {}, element("pre", { class: "setting-long", tabindex: "0", text }))
      : element("td", { class: value === undefined ? "muted" : null, text });
  }

  function diffTable(caption, headers, rows) {
    const head = element("tr", {}, ...headers.map((text) => element("th", { scope: "col", text })));
    return element("table", { class: "table diff-table" }, element("caption", { text: caption }),
      element("thead", {}, head), element("tbody", {}, ...rows));
  }

  function renderDiff() {
    const diff = state.comparison.config_diff;
    const runs = state.comparison.runs;
    const container = byId("config-diff");
    container.replaceChildren();
    if (diff.differing.length) {
      const rows = diff.differing.map((entry) => element("tr", {},
        element("th", { scope: "row" }, element("span", { class: "muted", text: `${entry.group} · ` }), entry.field),
        ...runs.map((run) => settingCell(entry.values[String(run.id)]))));
      const headers = ["Setting", ...runs.map((run) => run.name)];
      container.append(diffTable(`${diff.differing.length} settings differ`, headers, rows));
    } else {
      container.append(element("p", { class: "empty", text: "These runs were started with the same settings." }));
    }
    if (diff.equal.length) {
      const rows = diff.equal.map((entry) => element("tr", {},
        element("th", { scope: "row" }, element("span", { class: "muted", text: `${entry.group} · ` }), entry.field),
        settingCell(entry.value)));
      const folded = element("details", { class: "equal-settings" },
        element("summary", { text: `${diff.equal.length} settings are the same in every run` }),
        diffTable("Settings shared by all runs", ["Setting", "Value"], rows));
      container.append(folded);
    }
  }

  // --- samples side by side -----------------------------------------------------------------

  function samplesUrl(step) {
    const query = new URLSearchParams({ runs: page.runs.join(",") });
    if (step !== null && step !== "") query.set("step", step);
    return `${page.samples_api}?${query}`;
  }

  function completionCard(sample, promptTurns) {
    const reward = sample.total_reward === null ? "—" : formatNumber(sample.total_reward);
    const episode = window.EpisodeView.isEpisode(sample);
    const skip = promptTurns && window.EpisodeView.startsWith(sample.turns, promptTurns) ? promptTurns.length : 0;
    return element("div", { class: "completion" },
      element("p", { class: "muted",
        text: `group ${sample.group} · reward ${reward} · ${sample.num_tokens} tokens` +
          (sample.finish_reason && !episode ? ` · ${sample.finish_reason}` : "") }),
      episode ? window.EpisodeView.episode(sample, { skip }) : element("pre", { tabindex: "0", text: sample.completion }));
  }

  function runColumn(run, completions, shownStep, promptTurns) {
    const column = element("div", { class: "sample-column", "data-run": run.id },
      element("h4", {}, element("span", { class: "swatch", "aria-hidden": "true", style: `background:${colorOf(run.id)}` }),
        ` ${run.name}`, element("span", { class: "muted", text: shownStep === null ? "" : ` · step ${shownStep}` })));
    if (!completions || !completions.length) {
      column.append(element("p", { class: "empty", text: "Not sampled for this prompt at this step." }));
    } else {
      completions.forEach((sample) => column.append(completionCard(sample, promptTurns)));
    }
    return column;
  }

  function renderSamples(body) {
    const runs = state.comparison ? state.comparison.runs : page.runs.map((id) => ({ id, name: `#${id}` }));
    const container = byId("samples");
    container.replaceChildren();
    if (body.step !== null) byId("sample-step").value = body.step;
    if (!body.prompts.length) {
      byId("samples-status").textContent = "None of these runs logged samples yet.";
      return;
    }
    const steps = runs.map((run) => `${run.name}: ${body.steps[String(run.id)] ?? "none"}`).join(", ");
    byId("samples-status").textContent = `Nearest logged step at or before ${body.step} — ${steps}.`;
    const episodes = body.prompts.some((entry) => Object.values(entry.completions).flat().some(window.EpisodeView.isEpisode));
    if (episodes) container.append(window.EpisodeView.legend());
    for (const entry of body.prompts) {
      const promptTurns = episodePrompt(entry);
      const grid = element("div", { class: "sample-grid", style: `--columns:${runs.length}` },
        ...runs.map((run) => runColumn(run, entry.completions[String(run.id)], body.steps[String(run.id)], promptTurns)));
      const prompt = promptTurns && promptTurns.length ? window.EpisodeView.prompt(promptTurns)
        : element("pre", { class: "prompt", tabindex: "0", text: entry.prompt });
      container.append(element("article", { class: "sample-row card" }, element("h3", { text: "Prompt" }), prompt, grid));
    }
  }

  /* Episodes of one prompt: the messages before the first sampled turn, shown once as the prompt. */
  function episodePrompt(entry) {
    const first = Object.values(entry.completions).flat().find(window.EpisodeView.isEpisode);
    return first ? window.EpisodeView.promptTurns(first.turns) : null;
  }

  async function loadSamples(step) {
    byId("samples-status").textContent = "Loading samples…";
    try {
      renderSamples(await fetchJson(samplesUrl(step)));
    } catch (error) {
      byId("samples-status").textContent = `Could not load samples: ${error.message}`;
    }
  }

  // --- wiring -------------------------------------------------------------------------------

  function showSmoothing() {
    byId("smoothing").value = state.smooth;
    byId("smoothing-value").textContent = state.smooth ? state.smooth.toFixed(2) : "off";
  }

  function wire() {
    byId("x-axis").value = state.x;
    showSmoothing();
    byId("controls").addEventListener("submit", (event) => event.preventDefault());
    byId("x-axis").addEventListener("change", (event) => {
      state.x = event.target.value;
      GrpoCharts.resetZoom(SYNC_KEY); // a zoomed range of steps means nothing in seconds
      loadComparison();
    });
    byId("smoothing").addEventListener("input", (event) => {
      state.smooth = Number(event.target.value);
      showSmoothing();
      if (state.comparison) { redrawSmoothed(); rememberSettings(); }
    });
    byId("metric-options").addEventListener("change", onMetricToggled);
    byId("summary-table").addEventListener("click", onSortClicked);
    byId("samples-form").addEventListener("submit", (event) => {
      event.preventDefault();
      loadSamples(byId("sample-step").value);
    });
  }

  window.ComparePage = Object.freeze({ colorOf }); // for compare_evaluation.js
  wire();
  loadComparison().then(() => loadSamples(null));
})();
