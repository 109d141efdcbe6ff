// charts.js — line charts of metric series against the training step (or another x such
// as wall time), on uPlot (load vendor/uplot-1.6.32/uPlot.iife.min.js and uPlot.min.css, and
// page_kit.js, first). Used by the run page and the compare page; it knows nothing about
// runs, only about series of (x, value).
//
//   const chart = GrpoCharts.createSeriesChart(element, {
//     title: "Reward",                      // shown above the plot
//     series: [                             // one line each, in this order
//       {key: "rollout/reward_mean", label: "total", std: "rollout/reward_std"},   // band: value ± std
//       {key: "rollout/completion_length_mean", label: "mean",
//        range: ["rollout/completion_length_min", "rollout/completion_length_max"]}, // band: min..max
//       {key: "async/dropped_stale", label: "dropped", axis: "right"},            // second y axis
//       {key: "7", label: "run 7", color: "#3556d8"},                              // a colour of its own
//       {key: "eval/pass@1", label: "pass@1", points: true},                        // a dot at every value
//       {key: "accuracy", label: "pass@1", points: true,                            // error bars: low..high
//        range: ["accuracy_low", "accuracy_high"], bars: true},                     // at each value, no band
//     ],
//     height: 220,                          // px (default 220); the width follows the element
//     syncKey: "run-7",                     // charts with the same key share the hover cursor and zoom
//     x: {label: "Wall time (s)", format: (seconds) => "1:05"},  // x label and value text; default "step"
//     yRange: [0, 1],                       // a fixed left axis (rates); default: fitted to the data
//   });
//   chart.addSeriesData("rollout/reward_mean", {step: [1, 2], value: [0.1, 0.3]});  // merge columns
//   chart.appendPoints([{step: 3, values: {"rollout/reward_mean": 0.4, ...}}]);     // live points
//   chart.setSeries([...]);                 // change the lines; the data already given is kept
//   chart.keys();                           // every key the chart reads (lines, std and range keys)
//   chart.drawNow();                        // draw at once, on screen or not (a page's first render)
//   chart.pointCount(); chart.destroy();   // the element's data-points says how many x values are drawn
//
//   GrpoCharts.zoomGroup("run-7", 10, 50);  // show x 10..50 on every chart of the group
//   GrpoCharts.resetZoom("run-7");          // back to all of x (also: double-click a plot)
//   GrpoCharts.onZoom("run-7", fn);         // fn({min, max} or null) after every zoom change
//
// The `step` column is the x value, whatever the x axis means; x values are whole numbers
// (ticks at 1, 2, 5, 10, ...). Keys may be given data before or after they appear in
// `series`; a key's points are kept by x, so data given twice for an x (a live point, then the
// same point re-fetched after a reconnect) is stored once, the later value winning. Hovering
// shows every line's value at that x in the legend; dragging across a plot zooms into that
// range. A `range` with `bars: true` is drawn as an error bar (with caps) at each x where the
// line has a value, instead of a band: for sparse points, where a band would be drawn across the
// gaps; the element's data-error-bars says how many were drawn, and the legend shows low–high. The
// first time any chart draws points, the page gets a performance mark "grpo:first-chart-drawn"
// (read by bench/pages.py).
//
// Drawing is what costs, so it is rationed: data only marks a chart dirty; one shared
// animation-frame loop redraws dirty charts that are on screen (or near it), each at most
// every REDRAW_MS, and stops for the frame once FRAME_BUDGET_MS is spent, leaving the rest for
// the next frame. A chart off screen (scrolled away, in a closed <details>) is not even built
// until it is shown. So a page with thirty charts and twenty events a second redraws only the
// few charts in view, a few times a second, without long frames.
(function () {
  "use strict";

  const PALETTE = ["#3556d8", "#d8553b", "#2f9e6e", "#9b51e0", "#c29100", "#0095b6", "#e0457b", "#5b6475"];
  const FIRST_DRAW_MARK = "grpo:first-chart-drawn";
  const REDRAW_MS = 250; // live redraws of one chart: 4 a second at most
  const FRAME_BUDGET_MS = 8; // drawing per animation frame before the rest waits a frame
  const TITLE_PX = 26; // room for the title above the plot, when there is one
  const LEGEND_PX = 30; // and for the legend below it
  // Steps are whole numbers: tick at 1, 2, 5, 10, 20, 50, ... never at 1.25.
  const STEP_INCREMENTS = [1, 2, 5].flatMap((m) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].map((p) => m * p)).sort((a, b) => a - b);
  const groups = new Map(); // syncKey -> {charts: Set, zoom: {min, max} | null, listeners: []}
  let firstDrawMarked = false;

  /* The shared redraw loop: dirty charts, drawn when visible, due, and within the frame's budget.
     Charts that are not due yet are waited for with a timer, not by asking for every frame:
     a frame asked for is a frame the browser commits, even when nothing changed. */
  const dirty = new Set();
  let frame = null, timer = null;

  function requestDraw(chart) {
    dirty.add(chart);
    if (frame === null) frame = requestAnimationFrame(drawDirty);
  }

  function drawDirty(now) {
    frame = null;
    const started = performance.now();
    let nextDue = Infinity, overBudget = false;
    for (const chart of [...dirty]) {
      if (!chart.visible) continue; // drawn when it comes into view
      const due = chart.lastDraw + REDRAW_MS;
      if (now < due) { nextDue = Math.min(nextDue, due); continue; }
      if (performance.now() - started > FRAME_BUDGET_MS) { overBudget = true; continue; }
      dirty.delete(chart);
      chart.draw(now);
    }
    if (overBudget) frame = requestAnimationFrame(drawDirty);
    else if (nextDue < Infinity) drawAfter(nextDue - now);
  }

  function drawAfter(ms) {
    clearTimeout(timer);
    timer = setTimeout(() => { if (frame === null) frame = requestAnimationFrame(drawDirty); }, ms);
  }

  const visibility = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const chart = entry.target.grpoChart;
      if (!chart) continue;
      chart.visible = entry.isIntersecting;
      if (chart.visible && dirty.has(chart)) requestDraw(chart);
    }
  }, { rootMargin: "200px 0px" });

  function groupOf(syncKey) {
    if (!groups.has(syncKey)) groups.set(syncKey, { charts: new Set(), zoom: null, listeners: [] });
    return groups.get(syncKey);
  }

  const { formatNumber } = window.PageKit;
  const STEP_AXIS = { label: "step", format: null }; // null: uPlot's own tick labels, the number in the legend

  function withAlpha(hex, alpha) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
  }

  /* Sorted steps with membership, so that in-order appends (the usual case) cost O(1). */
  class StepIndex {
    constructor() { this.steps = []; this.known = new Set(); }
    add(step) {
      if (this.known.has(step)) return;
      this.known.add(step);
      const steps = this.steps;
      if (!steps.length || step > steps[steps.length - 1]) { steps.push(step); return; }
      let low = 0, high = steps.length;
      while (low < high) { const mid = (low + high) >> 1; if (steps[mid] < step) low = mid + 1; else high = mid; }
      steps.splice(low, 0, step);
    }
  }

  class SeriesChart {
    constructor(element, options) {
      this.element = element;
      this.title = options.title || "";
      this.height = options.height || 220;
      this.syncKey = options.syncKey || null;
      this.x = { ...STEP_AXIS, ...(options.x || {}) };
      this.yRange = options.yRange || null;
      this.values = new Map(); // key -> Map(step -> value)
      this.index = new StepIndex();
      this.plot = null;
      this.series = [];
      this.visible = false;
      this.lastDraw = -Infinity;
      element.classList.add("grpo-chart");
      // So that visibility is known before drawing.
      element.style.minHeight = `${this.height + LEGEND_PX + (this.title ? TITLE_PX : 0)}px`;
      element.grpoChart = this;
      visibility.observe(element);
      this.resizeObserver = new ResizeObserver(() => this.resize());
      this.resizeObserver.observe(element);
      if (this.syncKey) groupOf(this.syncKey).charts.add(this);
      this.setSeries(options.series || []);
    }

    keys() {
      const keys = [];
      for (const s of this.series) keys.push(s.key, ...(s.std ? [s.std] : []), ...(s.range || []));
      return keys;
    }

    pointCount() { return this.index.steps.length; }

    addSeriesData(key, columns) {
      const steps = columns.step || [], values = columns.value || [];
      for (let i = 0; i < steps.length; i++) this.store(key, steps[i], values[i]);
      this.scheduleDraw();
    }

    appendPoints(points) {
      const wanted = new Set(this.keys());
      for (const point of points) {
        for (const [key, value] of Object.entries(point.values)) {
          if (wanted.has(key)) this.store(key, point.step, value);
        }
      }
      this.scheduleDraw();
    }

    store(key, step, value) {
      if (!this.values.has(key)) this.values.set(key, new Map());
      this.values.get(key).set(step, value);
      this.index.add(step);
    }

    setSeries(series) {
      this.series = series.map((s, i) => ({ color: PALETTE[i % PALETTE.length], ...s }));
      if (this.plot) { this.plot.destroy(); this.plot = null; }
      this.scheduleDraw();
    }

    scheduleDraw() { requestDraw(this); }

    drawNow() {
      dirty.delete(this);
      this.draw(performance.now());
    }

    /* Columns for uPlot: steps, then per line its values, then each band's upper and lower edge. */
    columns() {
      const steps = this.index.steps;
      const column = (key) => {
        const byStep = this.values.get(key);
        return steps.map((step) => (byStep && byStep.has(step) ? byStep.get(step) : null));
      };
      const data = [steps.slice()];
      const bands = [];
      for (const s of this.series) data.push(column(s.key));
      this.series.forEach((s, i) => {
        const mean = data[i + 1];
        if (s.std) {
          const std = column(s.std);
          bands.push([mean.map((m, j) => (m === null || std[j] === null ? null : m + std[j])),
            mean.map((m, j) => (m === null || std[j] === null ? null : m - std[j]))]);
        } else if (s.range) {
          bands.push([column(s.range[1]), column(s.range[0])]);
        }
      });
      for (const [upper, lower] of bands) data.push(upper, lower);
      return data;
    }

    draw(now) {
      if (!this.index.steps.length) return;
      this.lastDraw = now || performance.now();
      const data = this.columns();
      this.element.dataset.points = String(data[0].length); // steps drawn: for tests and benches
      if (!this.plot) { this.create(data); return; }
      const zoom = this.syncKey ? groupOf(this.syncKey).zoom : null;
      this.plot.setData(data, !zoom);
      if (zoom) this.applyZoom(zoom);
    }

    create(data) {
      const hasRight = this.series.some((s) => s.axis === "right");
      const format = this.x.format || String;
      const formatX = (value) => (value === null || value === undefined ? "—" : format(value));
      const xTicks = this.x.format ? { values: (u, ticks) => ticks.map(formatX) } : {};
      const uSeries = [{ label: this.x.label, value: (u, v) => formatX(v) }];
      const uBands = [];
      const banded = this.series.filter((s) => s.std || s.range);
      this.series.forEach((s, i) => {
        uSeries.push({
          // uPlot's default shows points only where they are sparse, so a 1-step series is visible.
          label: s.label || s.key, stroke: s.color, width: 1.5, spanGaps: true,
          scale: s.axis === "right" ? "y2" : "y",
          // Sparse series (an evaluation every few hundred steps) among dense ones: dots always.
          ...(s.points ? { points: { show: true, size: 7, fill: s.color } } : {}),
          value: (u, v, sidx, idx) => this.describe(s, v, idx),
        });
      });
      banded.forEach((s, b) => {
        const upper = this.series.length + 1 + 2 * b;
        const edge = { stroke: "transparent", width: 0, spanGaps: true, points: { show: false },
          scale: s.axis === "right" ? "y2" : "y", label: "" };
        uSeries.push({ ...edge }, { ...edge });
        if (!s.bars) uBands.push({ series: [upper, upper + 1], fill: withAlpha(s.color, 0.15) });
      });
      const axes = [
        { label: this.x.label, size: 36, incrs: STEP_INCREMENTS, ...xTicks },
        { scale: "y", size: 56, values: (u, ticks) => ticks.map(formatNumber) },
      ];
      if (hasRight) axes.push({ scale: "y2", side: 1, size: 56, grid: { show: false }, values: (u, ticks) => ticks.map(formatNumber) });
      const chart = this;
      this.plot = new window.uPlot({
        title: this.title, width: Math.max(this.element.clientWidth, 200), height: this.height,
        series: uSeries, bands: uBands, axes,
        scales: { x: { time: false }, y: this.yRange ? { auto: false, range: this.yRange } : { auto: true }, y2: { auto: true } },
        legend: { live: true },
        cursor: {
          drag: { x: true, y: false, setScale: false },
          sync: this.syncKey ? { key: this.syncKey, setSeries: false } : undefined,
        },
        hooks: {
          setSelect: [(u) => chart.selected(u)],
          draw: [() => chart.markFirstDraw(), () => chart.drawErrorBars()],
        },
      }, data, this.element);
      this.hideBandLegend(uSeries.length - 2 * banded.length);
      this.plot.over.addEventListener("dblclick", () => { if (this.syncKey) resetZoom(this.syncKey); });
      const zoom = this.syncKey ? groupOf(this.syncKey).zoom : null;
      if (zoom) this.applyZoom(zoom);
    }

    describe(s, value, idx) {
      const text = formatNumber(value);
      if (idx === null || idx === undefined || value === null) return text;
      if (s.range && s.bars) {
        const step = this.index.steps[idx];
        const [low, high] = s.range.map((key) => this.values.get(key));
        if (low && high && low.has(step) && high.has(step)) return `${text} (${formatNumber(low.get(step))}–${formatNumber(high.get(step))})`;
      }
      if (s.std) {
        const std = this.values.get(s.std);
        const step = this.index.steps[idx];
        if (std && std.has(step)) return `${text} ± ${formatNumber(std.get(step))}`;
      }
      return text;
    }

    /* Each `bars` series' range as a vertical bar with caps at the x values where the line has one. */
    drawErrorBars() {
      const u = this.plot;
      if (!u) return;
      let drawn = 0;
      const banded = this.series.filter((s) => s.std || s.range);
      banded.forEach((s, b) => {
        if (!s.bars) return;
        const [xs, line, upper, lower] = [u.data[0], u.data[this.series.indexOf(s) + 1],
          u.data[this.series.length + 1 + 2 * b], u.data[this.series.length + 2 + 2 * b]];
        const scale = s.axis === "right" ? "y2" : "y", cap = 4 * window.uPlot.pxRatio;
        const { left, top, width, height } = u.bbox;
        u.ctx.save();
        u.ctx.beginPath();
        u.ctx.rect(left - cap, top, width + 2 * cap, height); // a cap at the first or last x shows whole
        u.ctx.clip();
        u.ctx.strokeStyle = s.color;
        u.ctx.lineWidth = 1.5 * window.uPlot.pxRatio;
        u.ctx.beginPath();
        for (let i = 0; i < xs.length; i++) {
          if ([line[i], upper[i], lower[i]].some((v) => v === null || v === undefined)) continue;
          const x = u.valToPos(xs[i], "x", true);
          if (x < left - 1 || x > left + width + 1) continue;
          const high = u.valToPos(upper[i], scale, true), low = u.valToPos(lower[i], scale, true);
          u.ctx.moveTo(x, high); u.ctx.lineTo(x, low);
          u.ctx.moveTo(x - cap, high); u.ctx.lineTo(x + cap, high);
          u.ctx.moveTo(x - cap, low); u.ctx.lineTo(x + cap, low);
          drawn += 1;
        }
        u.ctx.stroke();
        u.ctx.restore();
      });
      if (banded.some((s) => s.bars)) this.element.dataset.errorBars = String(drawn);
    }

    hideBandLegend(firstEdge) {
      const rows = this.plot.root.querySelectorAll(".u-legend .u-series");
      rows.forEach((row, i) => { if (i >= firstEdge) row.style.display = "none"; });
    }

    selected(u) {
      const width = u.select.width;
      if (width > 4 && this.syncKey) {
        const min = u.posToVal(u.select.left, "x"), max = u.posToVal(u.select.left + width, "x");
        zoomGroup(this.syncKey, Math.floor(min), Math.ceil(max));
      } else if (width > 4) {
        this.applyZoom({ min: u.posToVal(u.select.left, "x"), max: u.posToVal(u.select.left + width, "x") });
      }
      if (width > 0) u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    }

    applyZoom(zoom) {
      if (!this.plot) return;
      if (zoom) this.plot.setScale("x", { min: zoom.min, max: zoom.max });
      else this.plot.setData(this.plot.data, true);
    }

    markFirstDraw() {
      if (firstDrawMarked || !this.index.steps.length) return;
      firstDrawMarked = true;
      if (window.performance && performance.mark) performance.mark(FIRST_DRAW_MARK);
    }

    resize() {
      if (!this.plot) return;
      const width = Math.max(this.element.clientWidth, 200);
      if (Math.abs(width - this.plot.width) > 1) this.plot.setSize({ width, height: this.height });
    }

    destroy() {
      dirty.delete(this);
      visibility.unobserve(this.element);
      this.resizeObserver.disconnect();
      if (this.plot) this.plot.destroy();
      if (this.syncKey) groupOf(this.syncKey).charts.delete(this);
      this.plot = null;
    }
  }

  function zoomGroup(syncKey, min, max) {
    const group = groupOf(syncKey);
    group.zoom = min < max ? { min, max } : null;
    for (const chart of group.charts) chart.applyZoom(group.zoom);
    for (const listener of group.listeners) listener(group.zoom);
  }

  function resetZoom(syncKey) {
    const group = groupOf(syncKey);
    group.zoom = null;
    for (const chart of group.charts) chart.applyZoom(null);
    for (const listener of group.listeners) listener(null);
  }

  window.GrpoCharts = {
    createSeriesChart: (element, options) => new SeriesChart(element, options),
    zoomGroup, resetZoom,
    onZoom: (syncKey, listener) => groupOf(syncKey).listeners.push(listener),
    FIRST_DRAW_MARK,
  };
})();
