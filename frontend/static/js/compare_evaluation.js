// compare_evaluation.js — the compare page's "Follow an evaluation example" section, drawn from
// GET /api/compare/eval-examples/ (each run's example classes, the examples the runs share) and
// GET /api/compare/eval-example/ (one example, a column per run: its answers and pass mark at
// every evaluation). Loaded after compare.js, whose run colours it reuses. Model output is
// untrusted text: written with textContent. #follow-example gets data-state="ready" once an
// example is shown (or there is none to show).
(function () {
  "use strict";

  const { element, fetchJson, formatFixed } = window.PageKit;
  const section = document.getElementById("follow-example");
  if (!section) return;
  const page = JSON.parse(document.getElementById("compare-data").textContent);
  const CLASSES = ["learned", "forgotten", "unstable", "always_passed", "never_passed"];
  const LABELS = { always_passed: "always passed", never_passed: "never passed", learned: "learned",
                   forgotten: "forgotten", unstable: "unstable" };
  let asked = 0;

  function byId(id) {
    return document.getElementById(id);
  }

  function swatch(runId) {
    const color = window.ComparePage ? window.ComparePage.colorOf(runId) : "transparent";
    return element("span", { class: "swatch", "aria-hidden": "true", style: `background:${color}` });
  }

  function plural(count, word) {
    return `${count} ${word}${count === 1 ? "" : "s"}`;
  }

  function runsQuery(extra) {
    return new URLSearchParams({ runs: page.runs.join(","), ...extra });
  }

  function setStatus(text, state) {
    byId("follow-status").textContent = text;
    section.dataset.state = state;
  }

  // --- each run's classes ----------------------------------------------------------------------
  function renderClasses(runs) {
    const table = byId("eval-classes");
    table.hidden = !runs.some((run) => run.evaluations > 0);
    table.querySelector("tbody").replaceChildren(...runs.map((run) => element("tr", { "data-run": String(run.run) },
      element("th", { scope: "row" }, swatch(run.run), ` ${run.name}`),
      ...[run.evaluations, run.examples, ...CLASSES.map((name) => run.counts[name])]
        .map((count) => element("td", { class: "num", text: String(count) })))));
  }

  // --- picking a shared example ----------------------------------------------------------------
  function optionText(example, runs) {
    const names = Object.fromEntries(runs.map((run) => [String(run.run), run.name]));
    const classes = Object.entries(example.runs).map(([id, place]) => `${names[id]}: ${LABELS[place.classification]}`);
    return `${example.prompt_preview.slice(0, 90)} — ${classes.join(", ")}`;
  }

  function renderPicker(body) {
    byId("follow-form").hidden = body.examples.length === 0;
    byId("follow-key").replaceChildren(...body.examples.map((example) =>
      element("option", { value: example.key, text: optionText(example, body.runs) })));
  }

  async function load() {
    setStatus("Loading the evaluation examples…", "loading");
    let body;
    try {
      body = await fetchJson(`${page.eval_examples_api}?${runsQuery()}`);
    } catch (error) {
      setStatus(`Could not load the evaluation examples: ${error.message}`, "error");
      return;
    }
    renderClasses(body.runs);
    renderPicker(body);
    if (body.examples.length) {
      await show(body.examples[0].key);
      return;
    }
    const evaluated = body.runs.filter((run) => run.evaluations > 0).length;
    setStatus(evaluated < 2 ? "Fewer than two of these runs have evaluations: there is no example to follow in several."
      : "These runs were evaluated on different examples: none is shared.", "ready");
  }

  // --- one example, a column per run ---------------------------------------------------------
  async function show(key) {
    const mine = ++asked;
    setStatus("Loading the example…", "loading");
    let body;
    try {
      body = await fetchJson(`${page.eval_example_api}?${runsQuery({ key })}`);
    } catch (error) {
      if (mine === asked) setStatus(`Could not load the example: ${error.message}`, "error");
      return;
    }
    if (mine !== asked) return;
    byId("follow-key").value = key;
    const columns = element("div", { class: "eval-columns", style: `--columns:${body.runs.length}` },
      ...body.runs.map(runColumn));
    byId("follow-view").replaceChildren(element("article", { class: "card", "data-key": body.key },
      element("h3", { text: "Prompt" }), element("pre", { class: "prompt", tabindex: "0", text: body.prompt }), columns));
    setStatus(`Example ${body.key}: its answer at each evaluation, per run.`, "ready");
  }

  function runColumn(run) {
    const head = element("h4", {}, swatch(run.run), ` ${run.name}`, element("span", { class: "muted",
      text: run.index === null ? "" : ` · #${run.index} · ${LABELS[run.classification]} · ${plural(run.flips, "flip")}` }));
    const column = element("div", { class: "eval-column", "data-run": String(run.run) }, head);
    if (run.index === null) column.append(element("p", { class: "empty", text: "Not evaluated on this example." }));
    for (const evaluation of run.evaluations) column.append(stepBlock(evaluation));
    return column;
  }

  function stepBlock(evaluation) {
    return element("div", { class: "eval-step", "data-step": String(evaluation.step) },
      element("p", {}, element("strong", { text: `step ${evaluation.step} ` }),
        element("span", { class: `eval-mark ${evaluation.passes ? "pass" : "fail"}`, text: evaluation.passes ? "✓ pass" : "✗ fail" }),
        element("span", { class: "muted", text: ` · ${evaluation.passed}/${evaluation.samples} passed · score ${formatFixed(evaluation.score, 3)}` })),
      ...evaluation.answers.map((answer) =>
        element("pre", { class: `completion-text ${answer.passed ? "pass" : "fail"}`, tabindex: "0", text: answer.text })));
  }

  byId("follow-form").addEventListener("submit", (event) => event.preventDefault());
  byId("follow-key").addEventListener("change", (event) => show(event.target.value));
  load();
})();
