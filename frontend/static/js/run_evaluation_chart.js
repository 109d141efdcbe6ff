// Run page: the evaluation panel's chart (frontend/templates/runs/_evaluation.html). Held-out
// pass@1 at each evaluation with its 95% interval as error bars (Wilson, over the n examples
// evaluated: a pass rate over a few dozen examples moves by chance alone, and the bars say how
// far), and for a run on an environment its clean tool use (a tool called, every call working)
// on the same 0..1 axis: held out at each evaluation, and in training at every logged step, so
// that tool use and held-out accuracy are seen rising together. run_evaluation.js hands it the
// evaluation rows; the training series is read from the metrics API, then followed live.
(function (RunPage) {
  "use strict";

  const { element, fetchJson } = window.PageKit;
  const Metric = window.MetricNames;
  const Z = 1.96; // standard errors either side: a 95% interval
  const ACCURACY = "heldout/pass@1", LOW = "heldout/pass@1:low", HIGH = "heldout/pass@1:high";
  const HELD_OUT_TOOL_USE = Metric.EVAL_EPISODE.name({ metric: Metric.EPISODE_CLEAN_TOOL_USE });
  const TRAINING_TOOL_USE = Metric.EPISODE_CLEAN_TOOL_USE;

  /* The Wilson score interval [low, high] of a pass rate over n examples; null without n. */
  function wilsonInterval(rate, n) {
    if (!n || rate === null || rate === undefined) return null;
    const z2 = Z * Z;
    const centre = (rate + z2 / (2 * n)) / (1 + z2 / n);
    const half = (Z / (1 + z2 / n)) * Math.sqrt(Math.max(0, rate * (1 - rate)) / n + z2 / (4 * n * n));
    return [Math.max(0, centre - half), Math.min(1, centre + half)];
  }

  function examplesText(counts) {
    const low = Math.min(...counts), high = Math.max(...counts);
    return low === high ? `n = ${low} examples` : `n = ${low} to ${high} examples`;
  }

  /* Above the evaluations table in `body`, built with the first evaluation: a run that does not
     evaluate asks for nothing. */
  class HeldOutChart {
    constructor(body, page) {
      this.box = element("div", { id: "eval-chart", class: "chart-box", "data-chart": "heldout" });
      this.caption = element("figcaption", { id: "eval-chart-caption", class: "muted small" });
      body.insertBefore(element("figure", { class: "eval-chart" }, this.box, this.caption), body.querySelector(".table-scroll"));
      this.page = page;
      this.chart = null;
      this.heldOutToolUse = false;
      this.trainingToolUse = page.metric_names.includes(TRAINING_TOOL_USE);
      RunPage.liveListeners = RunPage.liveListeners || [];
      RunPage.catchUps = RunPage.catchUps || [];
      RunPage.liveListeners.push(["run.metrics", (payload) => this.livePoints(payload.points || [])]);
      RunPage.catchUps.push(() => this.loadTrainingToolUse());
    }

    series() {
      return [
        { key: ACCURACY, label: "held-out pass@1", points: true, range: [LOW, HIGH], bars: true },
        ...(this.heldOutToolUse ? [{ key: HELD_OUT_TOOL_USE, label: "held-out clean tool use", points: true }] : []),
        ...(this.trainingToolUse ? [{ key: TRAINING_TOOL_USE, label: "clean tool use in training" }] : []),
      ];
    }

    reshape(change) {
      const before = JSON.stringify(this.series());
      change();
      if (this.chart && JSON.stringify(this.series()) !== before) this.chart.setSeries(this.series());
    }

    /* The evaluation rows (runs/evaluation/history.py): pass@1 over `examples` at each step. */
    showRows(rows) {
      if (!rows.length) return;
      this.reshape(() => { this.heldOutToolUse ||= rows.some((row) => HELD_OUT_TOOL_USE in row.metrics); });
      if (!this.chart) {
        this.chart = GrpoCharts.createSeriesChart(this.box, {
          title: `Held-out pass@1${this.heldOutToolUse || this.trainingToolUse ? " and tool use" : ""} (bars: 95% interval)`, series: this.series(), syncKey: `run-${this.page.run}`, height: 240,
          yRange: [0, 1], // rates, all of them
        });
        this.loadTrainingToolUse();
      }
      const columns = { [ACCURACY]: [], [LOW]: [], [HIGH]: [], [HELD_OUT_TOOL_USE]: [] };
      const steps = { [ACCURACY]: [], [LOW]: [], [HIGH]: [], [HELD_OUT_TOOL_USE]: [] };
      const put = (key, step, value) => { steps[key].push(step); columns[key].push(value); };
      for (const row of rows) {
        put(ACCURACY, row.step, row.pass_at_1);
        const interval = wilsonInterval(row.pass_at_1, row.examples);
        if (interval) { put(LOW, row.step, interval[0]); put(HIGH, row.step, interval[1]); }
        if (HELD_OUT_TOOL_USE in row.metrics) put(HELD_OUT_TOOL_USE, row.step, row.metrics[HELD_OUT_TOOL_USE]);
      }
      for (const key of Object.keys(columns)) this.chart.addSeriesData(key, { step: steps[key], value: columns[key] });
      this.caption.textContent = "pass@1 on the held-out examples at each evaluation; bars: 95% interval " +
        `(Wilson, ±${Z} standard errors), ${examplesText(rows.map((row) => row.examples))}.` +
        (this.heldOutToolUse || this.trainingToolUse
          ? " Clean tool use: the share of episodes that called a tool and whose every call worked." : "");
    }

    /* The training series, whole (at most max_points): once built, and again after a reconnection.
       A failure leaves the chart as it was; the next reconnection asks again. */
    async loadTrainingToolUse() {
      if (!this.chart || !this.trainingToolUse) return;
      const query = new URLSearchParams({ names: TRAINING_TOOL_USE, max_points: this.page.max_points });
      try {
        const response = await fetchJson(`${this.page.urls.metrics}?${query}`);
        this.chart.addSeriesData(TRAINING_TOOL_USE, response.series[TRAINING_TOOL_USE]);
      } catch (error) {
        // the chart keeps what it has; the next reconnection asks again
      }
    }

    livePoints(points) {
      if (!points.some((point) => TRAINING_TOOL_USE in point.values)) return;
      this.reshape(() => { this.trainingToolUse = true; });
      if (this.chart) this.chart.appendPoints(points);
    }
  }

  RunPage.wilsonInterval = wilsonInterval;
  RunPage.HeldOutChart = HeldOutChart;
})(window.RunPage = window.RunPage || {});
