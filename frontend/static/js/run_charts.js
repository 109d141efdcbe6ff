// Run page: which metric goes in which chart, and the charts themselves (charts.js).
// The names are those the trainer emits, from metric_names.js (generated from
// worker/trainer/metric_names.py). A chart appears once one of its metrics has data; a metric no
// chart claims gets a chart of its own under "More metrics", so every reported series is shown.
(function (RunPage) {
  "use strict";

  const { element } = window.PageKit;
  const Metric = window.MetricNames;
  const REWARD_FN = Metric.ROLLOUT_REWARD_FN_MEAN.pattern;
  const EVAL_REWARD_FN = Metric.EVAL_REWARD_FN_MEAN.pattern;
  const PASS_AT_K = Metric.EVAL_PASS_AT_K.pattern;
  const END_REASON = Metric.EPISODE_END.pattern;
  const JUDGE_METRIC = Metric.JUDGE_MEASURE.pattern;
  const PLAN = [
    { id: "reward", title: "Reward (mean ± std)", series: rewardSeries },
    { id: "eval", title: "Evaluation (dots) beside the training reward", series: evalSeries },
    { id: "loss", title: "Loss", series: fixed([[Metric.TRAIN_LOSS, "loss"]]) },
    { id: "kl", title: "KL divergence", series: fixed([[Metric.TRAIN_KL_TO_REFERENCE, "to reference"], [Metric.TRAIN_KL_TO_SAMPLER, "to sampler"]]) },
    { id: "clip", title: "Clip ratios", series: fixed([
      [Metric.TRAIN_CLIP_RATIO_LOW, "low"], [Metric.TRAIN_CLIP_RATIO_HIGH, "high"], [Metric.TRAIN_CLIP_RATIO_REGION, "either"],
      [Metric.ROLLOUT_CLIPPED_RATIO, "truncated completions"]]) },
    { id: "length", title: "Completion length (tokens; band: min–max)", series: fixed([
      [Metric.ROLLOUT_COMPLETION_LENGTH_MEAN, "mean", { range: [Metric.ROLLOUT_COMPLETION_LENGTH_MIN, Metric.ROLLOUT_COMPLETION_LENGTH_MAX] }]]) },
    // Multi-turn rollouts (an environment): what an episode holds, and how episodes end.
    { id: "episodes", title: "Episodes: turns and tool calls per episode (mean)", series: fixed([
      [Metric.EPISODE_TURNS_MEAN, "turns"], [Metric.EPISODE_TOOL_CALLS_MEAN, "tool calls"],
      [Metric.EPISODE_TOKENS_MEAN, "tokens (right axis)", { axis: "right" }]]) },
    { id: "episode-ends", title: "Tool use, tool errors and why episodes ended (share of episodes)", series: episodeEndSeries },
    { id: "entropy", title: "Entropy", series: fixed([[Metric.TRAIN_ENTROPY, "entropy"]]) },
    { id: "staleness", title: "Staleness (versions) and dropped samples", series: fixed([
      [Metric.ASYNC_STALENESS_MEAN, "staleness mean"], [Metric.ASYNC_STALENESS_MAX, "staleness max"],
      [Metric.ASYNC_DROPPED_STALE, "dropped, total (right axis)", { axis: "right" }]]) },
    // The in-flight cap is a line of its own: with max_inflight_tasks: auto it moves with the measured rates.
    { id: "queue", title: "Groups in flight and queued, against the in-flight cap", series: fixed([
      [Metric.ASYNC_IN_FLIGHT, "groups in flight"], [Metric.ASYNC_QUEUE_DEPTH, "scored groups queued"],
      [Metric.ASYNC_MAX_INFLIGHT, "in-flight cap"]]) },
    { id: "throughput", title: "Tokens per second", series: fixed([
      [Metric.SYSTEM_GENERATION_TOKENS_PER_S, "generation"], [Metric.SYSTEM_TRAINING_TOKENS_PER_S, "training"]]) },
    { id: "sync", title: "Weight sync time (s)", series: fixed([
      [Metric.SYSTEM_WEIGHT_SYNC_S, "weight sync"], [Metric.SYSTEM_WEIGHT_SYNC_WRITE_S, "of which writing the file"],
      [Metric.SYSTEM_WEIGHT_SYNC_SERVER_RELOAD_S, "of which the server's reload"],
      [Metric.SYSTEM_WEIGHT_SYNC_UPLOAD_S, "of which sending it to vLLM's machines"],
      [Metric.SYSTEM_WEIGHT_SYNC_SEND_S, "of which the NCCL broadcast"]]) },
    // Judges and reward models (worker/trainer/rewards/judges/): one line per judge and measure.
    { id: "judge-agreement", title: "Judges against the verifiers (share of completions)", series: judgeSeries([
      ["disagreement", "disagrees"], ["pays_refused", "pays for what the verifier refuses"]]) },
    { id: "judge-latency", title: "Judge latency (s)", series: judgeSeries([
      ["latency_s_mean", "mean"], ["latency_s_max", "max"]]) },
    { id: "judge-calls", title: "Judge calls per logged step", series: judgeSeries([
      ["calls", "calls"], ["cache_hits", "cache hits"], ["failures", "failures"], ["timeouts", "of which timeouts"],
      ["unreadable", "unreadable answers"], ["retries", "retries"]]) },
    { id: "judge-tokens", title: "Judge tokens per logged step, and cost (USD, right axis)", series: judgeSeries([
      ["prompt_tokens", "prompt tokens"], ["answer_tokens", "answer tokens"],
      ["cost_usd_total", "cost so far", { axis: "right" }]]) },
    { id: "step-time", title: "Where a step's time goes (s)", series: fixed([
      [Metric.SYSTEM_STEP_TIME_S, "whole step"], [Metric.SYSTEM_TRAIN_SECONDS, "training"],
      [Metric.SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION, "of which beside generation, on fewer cores"],
      [Metric.ASYNC_WAIT_FOR_ROLLOUTS_S, "waiting for rollouts"],
      [Metric.ASYNC_WAIT_FOR_EXPIRING_S, "of which for a group about to expire"]]) },
  ];

  function fixed(lines) {
    return (names) => lines.filter(([key]) => names.has(key))
      .map(([key, label, extra]) => ({ key, label, ...(extra || {}) }));
  }

  function rewardSeries(names) {
    const series = [];
    if (names.has(Metric.ROLLOUT_REWARD_MEAN)) series.push({ key: Metric.ROLLOUT_REWARD_MEAN, label: "total", std: Metric.ROLLOUT_REWARD_STD });
    for (const name of [...names].sort()) {
      const match = REWARD_FN.exec(name);
      if (match) series.push({ key: name, label: match[1], std: Metric.ROLLOUT_REWARD_FN_STD.name({ reward: match[1] }) });
    }
    return series;
  }

  /* For each judge reporting them, the measures asked for (judge/<name>/<measure>), labelled "<name>: <label>". */
  function judgeSeries(measures) {
    return (names) => {
      const series = [];
      for (const name of [...names].sort()) {
        const match = JUDGE_METRIC.exec(name);
        const wanted = match && measures.find(([measure]) => measure === match[2]);
        if (wanted) series.push({ key: name, label: `${match[1]}: ${wanted[1]}`, ...(wanted[2] || {}) });
      }
      return series;
    };
  }

  /* Clean tool use (a tool called, every call working) and the tool error rate, then one line
     per end reason reported (episode/end/<reason>). */
  function episodeEndSeries(names) {
    const series = fixed([[Metric.EPISODE_CLEAN_TOOL_USE, "clean tool use"], [Metric.EPISODE_TOOL_ERROR_RATE, "tool error rate"]])(names);
    for (const name of [...names].sort()) {
      const match = END_REASON.exec(name);
      if (match) series.push({ key: name, label: `ended: ${match[1]}` });
    }
    return series;
  }

  /* The held-out results, one dot per evaluation (every eval_steps), over the training reward's
     line: whether what the reward rewards carries over to examples the run does not train on. */
  function evalSeries(names) {
    const sorted = [...names].sort();
    const series = sorted.filter((name) => PASS_AT_K.test(name))
      .sort((a, b) => Number(PASS_AT_K.exec(a)[1]) - Number(PASS_AT_K.exec(b)[1]))
      .map((name) => ({ key: name, label: name.slice(Metric.EVAL_PREFIX.length), points: true }));
    if (names.has(Metric.EVAL_REWARD_MEAN)) series.push({ key: Metric.EVAL_REWARD_MEAN, label: "eval reward", points: true });
    for (const name of sorted) {
      const match = EVAL_REWARD_FN.exec(name);
      if (match) series.push({ key: name, label: `eval ${match[1]}`, points: true });
    }
    if (series.length && names.has(Metric.ROLLOUT_REWARD_MEAN)) series.push({ key: Metric.ROLLOUT_REWARD_MEAN, label: "training reward" });
    return series;
  }

  /* {id: {title, series}} for the given metric names, the fixed charts first, then one per leftover name. */
  function chartPlan(names) {
    const known = new Set(names);
    const plan = new Map();
    const claimed = new Set();
    for (const chart of PLAN) {
      const series = chart.series(known);
      if (!series.length) continue;
      plan.set(chart.id, { title: chart.title, series, more: false });
      for (const s of series) for (const key of [s.key, s.std, ...(s.range || [])]) if (key) claimed.add(key);
    }
    for (const name of [...known].sort()) {
      if (!claimed.has(name)) plan.set(`metric:${name}`, { title: name, series: [{ key: name, label: name }], more: true });
    }
    return plan;
  }

  /* The metric names in the order a page fetches them, as batches: the total reward first
     (the first chart a person looks at, in one small request), then the other main charts,
     then the "More metrics" ones. */
  function loadOrder(names) {
    const plan = chartPlan(names);
    const batches = [[], [], []];
    const placed = new Set();
    for (const [id, spec] of plan) {
      for (const s of spec.series) {
        const batch = spec.more ? 2 : id === "reward" && s.key === Metric.ROLLOUT_REWARD_MEAN ? 0 : 1;
        for (const key of [s.key, s.std, ...(s.range || [])]) {
          if (key && names.includes(key) && !placed.has(key)) { batches[batch].push(key); placed.add(key); }
        }
      }
    }
    return batches.filter((batch) => batch.length);
  }

  class RunCharts {
    constructor({ main, more, moreCount, empty, syncKey }) {
      this.main = main;
      this.more = more;
      this.moreCount = moreCount;
      this.empty = empty;
      this.syncKey = syncKey;
      this.names = new Set();
      this.charts = new Map(); // plan id -> {chart, signature}
    }

    /* Makes sure every chart the names call for exists, with the right lines. */
    know(names) {
      let grew = false;
      for (const name of names) if (!this.names.has(name)) { this.names.add(name); grew = true; }
      if (!grew) return;
      for (const [id, spec] of chartPlan(this.names)) {
        const signature = JSON.stringify(spec.series);
        const existing = this.charts.get(id);
        if (existing && existing.signature === signature) continue;
        if (existing) { existing.chart.setSeries(spec.series); existing.signature = signature; continue; }
        this.charts.set(id, { chart: this.create(id, spec), signature });
      }
      this.empty.hidden = this.charts.size > 0;
      const extra = [...this.charts.keys()].filter((id) => id.startsWith("metric:")).length;
      this.more.closest("details").hidden = extra === 0;
      this.moreCount.textContent = String(extra);
    }

    create(id, spec) {
      const box = element("div", { class: "chart-box", "data-chart": id });
      const parent = spec.more ? this.more : this.main;
      // In the plan's order whatever arrives first: an evaluation at step 0 comes before any reward.
      const place = PLAN.findIndex((chart) => chart.id === id);
      const later = [...parent.children].find((child) => PLAN.findIndex((chart) => chart.id === child.dataset.chart) > place);
      parent.insertBefore(box, spec.more || place < 0 ? null : later || null);
      return GrpoCharts.createSeriesChart(box, { title: spec.title, series: spec.series, syncKey: this.syncKey, height: spec.more ? 180 : 220 });
    }

    /* A REST response of /api/runs/<id>/metrics/: {series: {name: {step: [], value: []}}}. */
    addSeries(series) {
      this.know(Object.keys(series).filter((name) => series[name].step.length));
      for (const [name, columns] of Object.entries(series)) {
        for (const { chart } of this.charts.values()) if (chart.keys().includes(name)) chart.addSeriesData(name, columns);
      }
    }

    /* Live points from a run.metrics event: [{step, time, values: {name: value}}]. */
    addPoints(points) {
      const names = new Set();
      for (const point of points) for (const name of Object.keys(point.values)) names.add(name);
      this.know(names);
      for (const { chart } of this.charts.values()) chart.appendPoints(points);
    }

    pointCount() {
      let count = 0;
      for (const { chart } of this.charts.values()) count = Math.max(count, chart.pointCount());
      return count;
    }
  }

  RunPage.RunCharts = RunCharts;
  RunPage.chartPlan = chartPlan;
  RunPage.metricLoadOrder = loadOrder;
})(window.RunPage = window.RunPage || {});
