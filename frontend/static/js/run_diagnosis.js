// Run page: the "Where the time goes" panel (frontend/templates/runs/_diagnosis.html), from
// GET /api/runs/<id>/diagnosis/ (runs/diagnosis/): the recent steps' time split, generation and
// training throughput, staleness, the in-flight queue, the bottleneck in one sentence and the
// knobs that move it. Asked for when the page loads, after a reconnection, once the run ends, and
// while it is live every REFRESH_STEPS newly logged steps (the diagnosis reads a window of steps:
// a newer one every step says nothing new), or every step while it is too short to diagnose (its
// count of steps measured keeps up), never more often than every MIN_INTERVAL_MS.
// A fetch that fails leaves a short note and whatever was shown; the rest of the page goes on.
(function (RunPage) {
  "use strict";

  const { element, fetchJson, formatNumber } = window.PageKit;
  const panel = document.getElementById("diagnosis");
  if (!panel) return;
  const data = JSON.parse(document.getElementById("run-data").textContent);
  const REFRESH_STEPS = 10;
  const MIN_INTERVAL_MS = 15_000;
  const PART_LABELS = { waiting_for_rollouts: "waiting for rollouts", training: "training",
                        weight_sync: "weight sync", evaluation: "evaluation", other: "other" };
  const state = { lastStep: null, newSteps: 0, lastAsked: -Infinity, timer: null, asked: 0, shown: false };

  function $(id) {
    return document.getElementById(id);
  }

  function seconds(value) {
    return value === null || value === undefined ? "—" : `${Number(value.toPrecision(3))} s`;
  }

  function percent(share) {
    if (share === null || share === undefined) return "—";
    return share > 0 && share < 0.005 ? "<1%" : `${Math.round(share * 100)}%`;
  }

  function fact(term, text) {
    return element("div", {}, element("dt", { text: term }), element("dd", { text }));
  }

  // --- fetching, at most every MIN_INTERVAL_MS ------------------------------------------------
  async function refresh() {
    clearTimeout(state.timer);
    state.timer = null;
    state.newSteps = 0;
    state.lastAsked = Date.now();
    const asked = ++state.asked;
    let diagnosis;
    try {
      diagnosis = await fetchJson(data.urls.diagnosis);
    } catch (error) {
      if (asked === state.asked) showFailure(error);
      return;
    }
    if (asked === state.asked) show(diagnosis);
  }

  function refreshSoon() {
    if (state.timer !== null) return;
    const wait = Math.max(0, state.lastAsked + MIN_INTERVAL_MS - Date.now());
    state.timer = setTimeout(refresh, wait);
  }

  /* A run.metrics message: counts the steps newer than any seen. */
  function metricsArrived(payload) {
    for (const point of payload.points || []) {
      if (state.lastStep === null || point.step > state.lastStep) {
        state.lastStep = point.step;
        state.newSteps += 1;
      }
    }
    if (state.newSteps >= (panel.dataset.state === "ok" ? REFRESH_STEPS : 1)) refreshSoon();
  }

  /* A run that has just ended: one last look, with the steps since the last refresh. */
  function statusChanged(payload) {
    if (payload.status && !data.active_statuses.includes(payload.status) && state.newSteps > 0) refreshSoon();
  }

  function reconnected() {
    if (Date.now() - state.lastAsked >= MIN_INTERVAL_MS) refreshSoon();
  }

  // --- drawing ------------------------------------------------------------------------------
  function show(diagnosis) {
    state.shown = true;
    const ok = diagnosis.status === "ok";
    panel.dataset.state = diagnosis.status;
    panel.dataset.bottleneck = diagnosis.bottleneck || "";
    $("diagnosis-sentence").hidden = false;
    $("diagnosis-sentence").textContent = diagnosis.sentence;
    $("diagnosis-sentence").classList.toggle("muted", !ok);
    $("diagnosis-note").hidden = true;
    $("diagnosis-body").hidden = !ok;
    if (!ok) return;
    showWindow(diagnosis);
    showTimeSplit(diagnosis.time_split, diagnosis.step_seconds);
    showThroughput(diagnosis.throughput);
    showStaleness(diagnosis.staleness);
    showQueue(diagnosis.queue);
    showSuggestions(diagnosis.suggestions, diagnosis.bottleneck);
  }

  function showFailure(error) {
    const note = $("diagnosis-note");
    note.hidden = false;
    note.textContent = `Could not load the diagnosis (${error.message}); it is asked for again as the run goes on.`;
    if (state.shown) return; // what was shown stays, with the note under the sentence
    panel.dataset.state = "failed";
    $("diagnosis-sentence").hidden = true;
  }

  function showWindow(diagnosis) {
    const [first, last] = diagnosis.window || [null, null];
    const steps = `${diagnosis.steps_measured} step${diagnosis.steps_measured === 1 ? "" : "s"}`;
    $("diagnosis-window").textContent = first === null ? `Over ${steps}.`
      : `Over steps ${first}–${last} (${steps}): a step takes ${seconds(diagnosis.step_seconds)} on average.`;
  }

  function showTimeSplit(parts, stepSeconds) {
    const shown = parts.filter((part) => part.share > 0);
    $("diagnosis-bar").replaceChildren(...shown.map((part) => {
      const segment = element("div", { class: `time-part part-${part.part}`, "data-part": part.part,
        title: `${PART_LABELS[part.part] || part.part}: ${seconds(part.seconds)} (${percent(part.share)})` });
      segment.style.width = `${part.share * 100}%`;
      return segment;
    }));
    $("diagnosis-bar").setAttribute("aria-label", `A step of ${seconds(stepSeconds)}: ` +
      shown.map((part) => `${PART_LABELS[part.part] || part.part} ${percent(part.share)}`).join(", "));
    $("diagnosis-legend").replaceChildren(...parts.map((part) => element("li", { "data-part": part.part },
      element("span", { class: `swatch part-${part.part}`, "aria-hidden": "true" }),
      `${PART_LABELS[part.part] || part.part} `, element("strong", { text: seconds(part.seconds) }),
      element("span", { class: "muted", text: ` (${percent(part.share)})` }))));
  }

  /* Generation beside training, each a bar against the larger of the two. */
  function showThroughput(throughput) {
    const rows = [["generation", throughput.generation_tokens_per_s], ["training", throughput.training_tokens_per_s]];
    const largest = Math.max(...rows.map(([, value]) => value || 0));
    $("diagnosis-throughput").replaceChildren(...rows.map(([name, value]) => {
      const bar = element("span", { class: `rate-bar rate-${name}` });
      bar.style.width = largest > 0 && value ? `${(value / largest) * 100}%` : "0";
      return element("div", { class: "rate-row", "data-rate": name }, element("span", { class: "rate-name", text: name }),
        element("span", { class: "rate-track" }, bar),
        element("span", { class: "rate-value", text: value === null || value === undefined ? "—" : formatNumber(Math.round(value)) }));
    }));
  }

  function showStaleness(staleness) {
    const dropped = `${staleness.dropped_groups} group${staleness.dropped_groups === 1 ? "" : "s"}` +
      (staleness.dropped_share === null ? "" : ` (${percent(staleness.dropped_share)} of groups)`);
    $("diagnosis-staleness").replaceChildren(
      fact("Dropped as too stale", dropped),
      fact("Versions behind, mean", `${formatNumber(staleness.staleness_mean)} (bound ${staleness.max_staleness})`),
      staleness.blocked_by_staleness === null ? null
        : fact("Bound held submission back", `${percent(staleness.blocked_by_staleness)} of the worker's tries`));
  }

  function showQueue(queue) {
    const cap = queue.max_inflight === "auto"
      ? `auto${queue.cap_mean === null ? "" : ` (mean ${formatNumber(queue.cap_mean)})`}` : String(queue.max_inflight);
    $("diagnosis-queue").replaceChildren(
      fact("Fullness", queue.fullness === null ? "—" : `${percent(queue.fullness)} of the cap`),
      fact("In flight, mean", `${formatNumber(queue.in_flight_mean)} groups (cap ${cap})`),
      fact("Scored groups queued, mean", formatNumber(queue.queue_depth_mean)),
      queue.blocked_by_inflight_cap === null ? null
        : fact("Cap held submission back", `${percent(queue.blocked_by_inflight_cap)} of the worker's tries`));
  }

  /* No suggestion: "nothing stands out" only where nothing does (balanced); where the sentence names
     a bottleneck (or why it names none), that no knob of the config moves it. */
  function showSuggestions(suggestions, bottleneck) {
    const none = $("diagnosis-no-suggestion");
    none.hidden = suggestions.length > 0;
    none.textContent = bottleneck === "balanced" ? none.dataset.balanced : none.dataset.otherwise;
    $("diagnosis-suggestions").replaceChildren(...suggestions.map((suggestion) => element("li",
      { "data-knob": suggestion.knob },
      knobName(suggestion.knob), ": ", element("code", { text: valueText(suggestion.current) }), " → ",
      element("code", { class: "proposed", text: valueText(suggestion.proposed) }), ...alsoSet(suggestion.also_set),
      element("p", { class: "muted small", text: suggestion.why }))));
  }

  /* Knobs changed together with the suggested one (a batch kept whole): ", with knob → value". */
  function alsoSet(knobs) {
    return Object.entries(knobs || {}).flatMap(([knob, value]) => [
      ", with ", knobName(knob), " → ", element("code", { class: "proposed", text: valueText(value) })]);
  }

  /* The knob, linked to its row in this page's Config section when there is one. */
  function knobName(knob) {
    const name = element("code", { text: knob });
    return document.getElementById(`config-${knob}`) ? element("a", { href: `#config-${knob}` }, name) : name;
  }

  function valueText(value) {
    if (value === null || value === undefined) return "none";
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  RunPage.liveListeners = RunPage.liveListeners || [];
  RunPage.catchUps = RunPage.catchUps || [];
  RunPage.liveListeners.push(["run.metrics", metricsArrived], ["run.status", statusChanged]);
  RunPage.catchUps.push(async () => reconnected());
  refresh();
})(window.RunPage = window.RunPage || {});
