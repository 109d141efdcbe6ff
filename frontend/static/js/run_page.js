// Run page (/runs/<id>/): puts the parts together. The server rendered the run and passed
// its starting data in #run-data; this script fetches the metric series over REST (the first
// charts' series first), follows the websocket, and after every (re)connection re-fetches
// what it may have missed: metrics after the last step seen, log lines after the last id,
// steps with samples, checkpoints. Every update is idempotent (points by step, lines and
// samples by id), so an event seen both live and in a re-fetch is shown once.
// Which buttons show is the server's call (the run's allowed_actions): embedded in the page,
// then asked of the API again after each live status change and each reconnection.
(function (RunPage) {
  "use strict";

  const { element, fetchJson, formatBytes } = window.PageKit;
  const Metric = window.MetricNames;
  const data = JSON.parse(document.getElementById("run-data").textContent);
  const MAX_POINTS = data.max_points; // about one per horizontal pixel of a chart
  const MAX_NAMES = 100; // runs/telemetry/query_serializers.py MetricsQuery.MAX_NAMES
  const syncKey = `run-${data.run}`;

  let status = data.status;
  let lastMetricStep = null;
  let actionsAsked = 0; // answers to older questions are dropped
  const stepTimes = [];

  function $(id) {
    return document.getElementById(id);
  }

  function query(params) {
    const pairs = Object.entries(params).filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    return `?${pairs.join("&")}`;
  }

  // --- status, progress, ETA, buttons ------------------------------------------------------
  function applyStatus(payload) {
    status = { ...status, ...payload };
    const badge = $("run-status");
    badge.textContent = data.status_labels[status.status] || status.status;
    badge.className = `badge status-${status.status}`;
    document.body.dataset.runStatus = status.status;
    $("run-cancelling").hidden = !(status.cancel_requested && data.active_statuses.includes(status.status));
    const waiting = $("run-pool-waiting");  // "no live worker listens on pool X": only while queued
    if (waiting && status.status !== "queued") waiting.hidden = true;
    const error = $("run-error");
    error.hidden = !status.error;
    error.textContent = status.error || "";
    // The reason a run ended: drawn as an error only when it failed (not "trained 60 steps").
    const failed = ["failed", "lost"].includes(status.status);
    error.classList.toggle("error", failed);
    error.classList.toggle("run-error", failed);
    $("run-attempt").textContent = String(status.attempt);
    showProgress(status.step);
  }

  /* Each form in .run-actions names its action (data-action); it shows when the run allows it. */
  function showActions(allowed) {
    for (const form of document.querySelectorAll(".run-actions [data-action]")) {
      form.hidden = !allowed.includes(form.dataset.action);
    }
  }

  async function refreshActions() {
    const asked = ++actionsAsked;
    const run = await fetchJson(data.urls.run);
    if (asked === actionsAsked) showActions(run.allowed_actions);
  }

  function statusChanged(payload) {
    applyStatus(payload);
    // If this fails, the buttons stay as they were until the next status change or reconnection.
    refreshActions().catch(() => {});
  }

  function showProgress(step) {
    if (step === undefined || step === null) return;
    status.step = Math.max(status.step || 0, step);
    $("run-step").textContent = String(status.step);
    const bar = $("run-progress");
    if (bar && data.max_steps) bar.value = Math.min(status.step, data.max_steps);
    $("run-eta").textContent = etaText();
  }

  function etaText() {
    if (!data.max_steps || status.status !== "running" || !status.step) return "";
    const remaining = data.max_steps - status.step;
    if (remaining <= 0) return "finishing";
    const recent = stepTimes.slice(-10);
    let perStep = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : null;
    if (perStep === null && data.started_at) perStep = (Date.now() - Date.parse(data.started_at)) / 1000 / status.step;
    if (!perStep) return "";
    const seconds = remaining * perStep;
    const text = seconds < 90 ? `${Math.round(seconds)} s` : seconds < 5400 ? `${Math.round(seconds / 60)} min`
      : `${(seconds / 3600).toFixed(1)} h`;
    return `about ${text} left (${perStep.toFixed(1)} s a step)`;
  }

  function noteStepTimes(steps, values) {
    for (let i = 0; i < values.length; i++) if (values[i] !== null) stepTimes.push(values[i]);
    stepTimes.splice(0, Math.max(0, stepTimes.length - 20));
  }

  // --- metrics -----------------------------------------------------------------------------
  const charts = new RunPage.RunCharts({
    main: $("charts-main"), more: $("charts-more"), moreCount: $("charts-more-count"),
    empty: $("charts-empty"), syncKey,
  });

  // The metric series load first, while the rest of the page is set up: charts are what a
  // person waits for. Every chart's box exists from the start, filled as its series arrive.
  charts.know(data.metric_names);
  const initialLoad = loadMetrics().catch((error) => {
    $("charts-empty").hidden = false;
    $("charts-empty").textContent = `Could not load the metrics: ${error.message}. They load again on reconnection.`;
    throw error;
  });

  function takeSeries(response) {
    charts.addSeries(response.series);
    for (const [name, columns] of Object.entries(response.series)) {
      const steps = columns.step;
      if (steps.length) lastMetricStep = Math.max(lastMetricStep ?? 0, steps[steps.length - 1]);
      if (name === Metric.SYSTEM_STEP_TIME_S) noteStepTimes(steps, columns.value.slice(-10));
    }
    if (lastMetricStep !== null) showProgress(lastMetricStep);
  }

  async function fetchSeries(names, stepMin) {
    for (let i = 0; i < names.length; i += MAX_NAMES) {
      const chunk = names.slice(i, i + MAX_NAMES);
      takeSeries(await fetchJson(data.urls.metrics + query({ names: chunk.join(","), step_min: stepMin, max_points: MAX_POINTS })));
    }
  }

  async function loadMetrics() {
    const embedded = Object.keys(data.first_series); // the first chart's series came with the page
    if (embedded.length) takeSeries({ series: data.first_series });
    const rest = data.metric_names.filter((name) => !embedded.includes(name));
    for (const batch of RunPage.metricLoadOrder(rest)) await fetchSeries(batch, null);
    if (performance.mark) performance.mark("grpo:metrics-loaded");
  }

  async function metricsSince(step) {
    // All names, including ones that appeared while we were away.
    takeSeries(await fetchJson(data.urls.metrics + query({ step_min: step ?? 0, max_points: MAX_POINTS })));
  }

  function liveMetrics(points) {
    charts.addPoints(points);
    for (const point of points) {
      lastMetricStep = Math.max(lastMetricStep ?? 0, point.step);
      if (Metric.SYSTEM_STEP_TIME_S in point.values) noteStepTimes([point.step], [point.values[Metric.SYSTEM_STEP_TIME_S]]);
    }
    showProgress(lastMetricStep);
  }

  // --- samples, logs, checkpoints ----------------------------------------------------------
  const completions = new RunPage.CompletionsBrowser($("completions"), {
    samplesUrl: data.urls.samples, steps: data.sample_steps, rewardNames: data.reward_names,
  });
  const logs = new RunPage.LogPanel($("logs"), data.logs);
  const checkpoints = new Map();
  const hubPushes = new RunPage.HubPushes($("checkpoints"), {
    pushUrl: data.urls.push, listUrl: data.urls.pushes, hubUrl: data.hub_endpoint, pushes: data.pushes,
  });

  async function samplesSince() {
    const newest = completions.newest();
    const response = await fetchJson(data.urls.sample_steps + query({ after: newest }));
    completions.addSteps(response.steps);
    if (completions.follow && completions.newest() !== completions.current) await completions.show(completions.newest());
  }

  async function logsSince() {
    let url = data.urls.logs + query({ after: logs.lastId, page_size: 1000 });
    for (let pages = 0; url && pages < 20; pages++) {
      const page = await fetchJson(url);
      logs.add(page.results);
      url = page.next;
    }
  }

  function addCheckpoints(list) {
    for (const checkpoint of list) checkpoints.set(checkpoint.id, checkpoint);
    const rows = [...checkpoints.values()].sort((a, b) => a.step - b.step).map(checkpointRow);
    $("checkpoint-rows").replaceChildren(...rows);
    $("checkpoints-empty").hidden = rows.length > 0;
    $("checkpoints-table").hidden = rows.length === 0;
  }

  function checkpointRow(checkpoint) {
    // Uploaded by a worker on another machine, or left where the worker wrote it (this machine's disk).
    const keptOn = checkpoint.in_store ? "control plane (uploaded)" : "worker's disk";
    const cells = [`step ${checkpoint.step}`, String(checkpoint.model_version),
      formatBytes(checkpoint.size_bytes || null), new Date(checkpoint.created_at).toLocaleString(), keptOn];
    const push = element("button", { type: "button", class: "link", text: "Push to Hub",
      "aria-label": `Push step ${checkpoint.step} to the Hugging Face Hub` });
    push.addEventListener("click", () => hubPushes.open(checkpoint, pushParts(checkpoint)));
    return element("tr", {}, ...cells.map((text) => element("td", { text })),
      element("td", {}, ...exportLinks(checkpoint)), element("td", {}, push));
  }

  // The whole checkpoint (to resume from) and what serves: the model without its optimizer state,
  // or for LoRA the adapter, and the merged model that a run's last checkpoint holds.
  function exportParts(checkpoint) {
    const newest = Math.max(...[...checkpoints.values()].map((c) => c.step));
    const parts = [["all", "Checkpoint (.tar)"]];
    if (data.lora) parts.push(["adapter", "Adapter"]);
    if (!data.lora || checkpoint.step === newest) parts.push(["model", data.lora ? "Merged model" : "Model"]);
    return parts;
  }

  // The same parts offered for a push, what serves first (the API's default is the model).
  function pushParts(checkpoint) {
    const labels = { model: data.lora ? "Merged model (ready to serve)" : "Model (ready to serve)",
                     adapter: "LoRA adapter", all: "Whole checkpoint (with optimizer state)" };
    const exported = exportParts(checkpoint).map(([part]) => part);
    return ["model", "adapter", "all"].filter((part) => exported.includes(part)).map((part) => [part, labels[part]]);
  }

  function exportLinks(checkpoint) {
    const url = data.urls.download.replace("{id}", checkpoint.id);
    return exportParts(checkpoint).flatMap(([part, text], index) => [
      ...(index ? [" · "] : []),
      element("a", { href: part === "all" ? url : `${url}?part=${part}`, download: "", text }),
    ]);
  }

  // --- live ------------------------------------------------------------------------------
  const HANDLERS = {
    "run.status": statusChanged,
    "run.metrics": (payload) => liveMetrics(payload.points),
    "run.samples": (payload) => completions.addLive(payload.samples),
    "run.log": (payload) => logs.add(payload.lines),
    "run.checkpoint": (payload) => addCheckpoints([payload]),
    // Panels with scripts of their own (run_evaluation.js, run_alarms.js) register theirs.
    ...RunPage.liveHandlers,
  };
  // Panels that follow a message this page already handles (run_diagnosis.js counts the steps of
  // run.metrics) listen beside it: [type, handler] pairs, each called after the page's own handler.
  const LISTENERS = RunPage.liveListeners || [];

  function dispatch(event) {
    if (HANDLERS[event.type]) HANDLERS[event.type](event.payload);
    for (const [type, handle] of LISTENERS) if (type === event.type) handle(event.payload);
  }

  async function catchUp(hello) {
    applyStatus(hello);
    try { await initialLoad; } catch (error) { await loadMetrics(); }
    await Promise.all([
      metricsSince(lastMetricStep), logsSince(), samplesSince(), refreshActions(),
      fetchJson(data.urls.checkpoints).then(addCheckpoints),
      ...RunPage.catchUps.map((catchUpPanel) => catchUpPanel()),
    ]);
  }

  const STATES = {
    connecting: "Connecting…", "catching-up": "Catching up…", live: "Live",
    reconnecting: "Connection lost — reconnecting", gone: "This run is no longer available",
    "access-lost": "You no longer have access to this run; reload the page",
  };

  function showConnection(state, delay) {
    const indicator = $("live-indicator");
    indicator.dataset.state = state;
    $("live-text").textContent = STATES[state] + (state === "reconnecting" && delay ? ` in ${Math.round(delay / 1000) || 1} s` : "");
    $("live-retry").hidden = state !== "reconnecting";
  }

  const socket = new RunPage.LiveSocket(data.urls.socket, {
    onHello: catchUp,
    onEvent: dispatch,
    onState: showConnection,
  });
  $("live-retry").addEventListener("click", () => socket.retryNow());
  window.addEventListener("online", () => socket.retryNow());

  // --- zoom by keyboard: a step range form besides dragging on a chart ----------------------
  $("zoom-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const from = Number($("zoom-from").value), to = Number($("zoom-to").value);
    if (Number.isFinite(from) && Number.isFinite(to) && to > from) GrpoCharts.zoomGroup(syncKey, from, to);
  });
  $("zoom-reset").addEventListener("click", () => GrpoCharts.resetZoom(syncKey));
  GrpoCharts.onZoom(syncKey, (zoom) => {
    $("zoom-reset").hidden = !zoom;
    $("zoom-from").value = zoom ? String(zoom.min) : "";
    $("zoom-to").value = zoom ? String(zoom.max) : "";
  });

  addCheckpoints(data.checkpoints);
  applyStatus(data.status);
  showActions(data.allowed_actions);
  socket.connect();
})(window.RunPage = window.RunPage || {});
