// Run page: the evaluation panel (frontend/templates/runs/_evaluation.html). Starts from
// data.evaluation in #run-data (whether the run evaluates, its evaluations so far, the API's
// URLs) and reads the evaluation API for the rest:
//   - a chart of held-out pass@1 with its 95% interval, and tool use beside it (run_evaluation_chart.js);
//   - a table of the evaluations: pass@1 (its interval under it), pass@k, mean score, examples flipped since the one before;
//   - one evaluation's examples (pass mark, score, answers folded), filtered by outcome;
//   - every example across evaluations by class (learned, forgotten, unstable, never moved);
//   - one example followed: its answer, pass mark and rewards at every evaluation.
// A run.evaluation message (or a reconnection) re-fetches the table and the examples; the shown
// evaluation follows the newest unless the user picked another. Model output is untrusted text:
// everything is written with textContent.
(function (RunPage) {
  "use strict";

  const { element, fetchJson, formatFixed } = window.PageKit;
  const Metric = window.MetricNames;
  const panel = document.getElementById("evaluation");
  if (!panel) return;
  const page = JSON.parse(document.getElementById("run-data").textContent);
  const data = page.evaluation;
  const PAGE_SIZE = 50;
  const CLASS_LABELS = { always_passed: "always passed", never_passed: "never passed", learned: "learned",
                         forgotten: "forgotten", unstable: "unstable" };
  // Choices of the class filter that stand for several classes.
  const CLASS_GROUPS = { moved: ["learned", "forgotten", "unstable"], never_moved: ["always_passed", "never_passed"] };
  const state = { rows: data.evaluations, step: null, next: null, asked: 0, examples: null, followed: null };
  const chart = new RunPage.HeldOutChart(document.getElementById("eval-body"), page);

  function $(id) {
    return document.getElementById(id);
  }

  function plural(count, word) {
    return `${count} ${word}${count === 1 ? "" : "s"}`;
  }

  /* Passes or fails, in words as well as a sign. */
  function passMark(passes) {
    return element("span", { class: `eval-mark ${passes ? "pass" : "fail"}`, text: passes ? "✓ pass" : "✗ fail" });
  }

  function numberCell(text) {
    return element("td", { class: "num", text });
  }

  function promptLine(prompt) {
    const question = RunPage.lastUserTurn ? RunPage.lastUserTurn(prompt) : prompt;
    const line = question.replace(/\s+/g, " ").trim();
    return line.length > 200 ? `${line.slice(0, 199)}…` : line;
  }

  function rewardsText(rewards) {
    return Object.entries(rewards).map(([name, value]) => `${name} ${formatFixed(value, 2)}`).join(", ") || "—";
  }

  // --- the evaluations table -----------------------------------------------------------------
  function newestStep() {
    return state.rows.length ? state.rows[state.rows.length - 1].step : null;
  }

  function renderEvaluations() {
    const passK = data.eval_samples > 1 ? Metric.EVAL_PASS_AT_K.name({ k: data.eval_samples }) : null;
    $("eval-empty").hidden = state.rows.length > 0 || !data.configured;
    $("eval-body").hidden = state.rows.length === 0;
    $("eval-passk-head").hidden = !passK;
    $("eval-rows").replaceChildren(...state.rows.map((row) => evaluationRow(row, passK)));
    chart.showRows(state.rows);
    const select = $("eval-step");
    select.replaceChildren(...state.rows.map((row) => element("option", { value: String(row.step), text: `step ${row.step}` })));
    if (state.step !== null) select.value = String(state.step);
  }

  function evaluationRow(row, passK) {
    const open = element("button", { type: "button", class: "link", text: `step ${row.step}`,
      "aria-label": `Show the examples of the evaluation at step ${row.step}` });
    open.addEventListener("click", () => pickStep(row.step));
    return element("tr", { "data-step": String(row.step) }, element("th", { scope: "row" }, open),
      numberCell(String(row.model_version)), numberCell(String(row.examples)), numberCell(String(row.passing)),
      passCell(row), passK ? numberCell(formatFixed(row.metrics[passK], 3)) : null,
      numberCell(formatFixed(row.mean_score, 3)), numberCell(flipText(row.flipped_to_pass, "↑")),
      numberCell(flipText(row.flipped_to_fail, "↓")));
  }

  /* pass@1, and under it its 95% interval over the examples evaluated. */
  function passCell(row) {
    const interval = RunPage.wilsonInterval(row.pass_at_1, row.examples);
    if (!interval) return numberCell(formatFixed(row.pass_at_1, 3));
    return element("td", { class: "num", title: `95% interval (Wilson) over ${plural(row.examples, "example")}` },
      formatFixed(row.pass_at_1, 3), element("span", { class: "eval-interval muted small",
        text: `${formatFixed(interval[0], 2)}–${formatFixed(interval[1], 2)}` }));
  }

  function flipText(count, arrow) {
    return count === null ? "—" : count ? `${arrow} ${count}` : "0";
  }

  // --- one evaluation's examples --------------------------------------------------------------
  function pickStep(step) {
    $("eval-follow-newest").checked = step === newestStep();
    showStep(step);
  }

  function stepUrl(step) {
    const outcome = $("eval-outcome").value;
    const query = new URLSearchParams({ page_size: PAGE_SIZE });
    if (outcome) query.set("outcome", outcome);
    return `${data.urls.evaluation.replace("{step}", step)}?${query}`;
  }

  async function showStep(step, more = false) {
    state.step = step;
    $("eval-step").value = String(step);
    const asked = ++state.asked;
    if (!more) $("eval-step-status").textContent = `Loading the evaluation at step ${step}…`;
    let page;
    try {
      page = await fetchJson(more ? state.next : stepUrl(step));
    } catch (error) {
      if (asked === state.asked) $("eval-step-status").textContent = `Could not load step ${step}: ${error.message}`;
      return;
    }
    if (asked !== state.asked) return; // a newer choice was made meanwhile
    state.next = page.next;
    const items = page.results.map(outcomeItem);
    if (more) $("eval-outcomes").append(...items);
    else $("eval-outcomes").replaceChildren(...items);
    $("eval-more").hidden = !page.next;
    const filter = $("eval-outcome").selectedOptions[0];
    $("eval-step-status").textContent = `Step ${step}: ${plural(page.count, "example")}` +
      (filter.value ? ` (${filter.textContent})` : "") + ".";
  }

  function outcomeItem(outcome) {
    const change = outcome.flipped ? (outcome.passes ? " · newly passing" : " · newly failing") : "";
    const answers = element("details", { class: "fold" },
      element("summary", { text: `${plural(outcome.answers.length, "answer")}, ${outcome.passed} passed` }),
      ...outcome.answers.map(answerBlock));
    return element("li", { class: "eval-outcome", "data-index": String(outcome.index) },
      element("div", { class: "eval-outcome-head" }, passMark(outcome.passes),
        element("strong", { text: ` #${outcome.index} ` }),
        element("span", { class: "muted small", text: `score ${formatFixed(outcome.score, 3)}${change}` }),
        followButton(outcome.index)),
      element("p", { class: "eval-prompt", text: promptLine(outcome.prompt) }), answers);
  }

  function answerBlock(answer) {
    const finish = answer.finish_reason ? ` · ${answer.finish_reason}` : "";
    return element("div", { class: "eval-answer" },
      element("p", { class: "muted small", text: `${answer.passed ? "passed" : "failed"} · reward ` +
        `${formatFixed(answer.total_reward, 3)} (${rewardsText(answer.rewards)}) · ${answer.num_tokens} tokens${finish}` }),
      element("pre", { class: "completion-text", text: answer.text }));
  }

  // --- examples across evaluations -----------------------------------------------------------
  async function loadExamples() {
    try {
      state.examples = await fetchJson(data.urls.examples);
    } catch (error) {
      $("eval-examples-status").textContent = `Could not load the examples: ${error.message}`;
      return;
    }
    renderExamples();
  }

  function chosenClasses(value) {
    return CLASS_GROUPS[value] || (value ? [value] : Object.keys(CLASS_LABELS));
  }

  function renderExamples() {
    const overview = state.examples;
    for (const option of $("eval-class").options) {
      const count = chosenClasses(option.value).reduce((sum, name) => sum + overview.counts[name], 0);
      option.textContent = `${option.textContent.replace(/ \(\d+\)$/, "")} (${count})`;
    }
    const classes = chosenClasses($("eval-class").value);
    const shown = overview.examples.filter((example) => classes.includes(example.classification));
    $("eval-examples").hidden = shown.length === 0;
    $("eval-examples-status").textContent = shown.length
      ? `${shown.length} of ${plural(overview.examples.length, "example")}, over ${plural(overview.steps.length, "evaluation")}.`
      : `No example is ${$("eval-class").selectedOptions[0].textContent.replace(/ \(\d+\)$/, "")}, of ${plural(overview.examples.length, "example")}.`;
    $("eval-example-rows").replaceChildren(...shown.map((example) => exampleRow(example, overview.steps)));
  }

  function exampleRow(example, steps) {
    const marks = example.pass_rates.map((rate, i) => (rate === null
      ? element("span", { class: "eval-dot none", title: `step ${steps[i]}: not evaluated`, text: "·" })
      : element("span", { class: `eval-dot ${rate >= 0.5 ? "pass" : "fail"}`, text: rate >= 0.5 ? "✓" : "✗",
        title: `step ${steps[i]}: ${formatFixed(rate * 100, 0)}% of answers passed` })));
    return element("tr", { "data-index": String(example.index) },
      numberCell(String(example.index)), element("td", { class: "eval-prompt", text: example.prompt_preview }),
      element("td", { class: "eval-trajectory", "aria-label": marksLabel(example, steps) }, ...marks),
      numberCell(String(example.flips)), element("td", { text: CLASS_LABELS[example.classification] }),
      element("td", {}, followButton(example.index)));
  }

  function marksLabel(example, steps) {
    return example.pass_rates.map((rate, i) => `step ${steps[i]} ${rate === null ? "not evaluated" : rate >= 0.5 ? "pass" : "fail"}`).join(", ");
  }

  // --- one example, followed -----------------------------------------------------------------
  function followButton(index) {
    const button = element("button", { type: "button", class: "link eval-follow", text: "Follow",
      "aria-label": `Follow example ${index} across the evaluations` });
    button.addEventListener("click", () => follow(index, true));
    return button;
  }

  async function follow(index, scroll) {
    state.followed = index;
    let example;
    try {
      example = await fetchJson(data.urls.example.replace("{index}", index));
    } catch (error) {
      $("eval-followed-summary").textContent = `Could not load example ${index}: ${error.message}`;
      return;
    }
    if (state.followed !== index) return;
    renderFollowed(example);
    if (scroll) {
      $("eval-followed").scrollIntoView({ block: "nearest" });
      $("eval-followed").focus({ preventScroll: true });
    }
  }

  function renderFollowed(example) {
    $("eval-followed").hidden = false;
    $("eval-followed").dataset.index = String(example.index);
    $("eval-followed-heading").textContent = `Example #${example.index}, followed`;
    $("eval-followed-summary").textContent = `${CLASS_LABELS[example.classification]} · ` +
      `${plural(example.flips, "flip")} over ${plural(example.evaluations.length, "evaluation")} · key ${example.key}`;
    $("eval-followed-prompt").textContent = example.prompt;
    $("eval-followed-rows").replaceChildren(...example.evaluations.map((evaluation) => element("tr",
      { "data-step": String(evaluation.step) },
      element("th", { scope: "row", text: `step ${evaluation.step}` }),
      element("td", {}, passMark(evaluation.passes), ` ${evaluation.passed}/${evaluation.samples}`),
      numberCell(formatFixed(evaluation.score, 3)),
      element("td", { class: "eval-answers" }, ...evaluation.answers.map((answer) =>
        element("pre", { class: `completion-text ${answer.passed ? "pass" : "fail"}`, text: answer.text }))),
      element("td", { class: "small" }, ...evaluation.answers.map((answer) => element("div", { text: rewardsText(answer.rewards) }))))));
  }

  function closeFollowed() {
    state.followed = null;
    $("eval-followed").hidden = true;
  }

  // --- live -----------------------------------------------------------------------------------
  async function refresh() {
    const body = await fetchJson(data.urls.evaluations);
    state.rows = body.evaluations;
    renderEvaluations();
    const newest = newestStep();
    const following = $("eval-follow-newest").checked || state.step === null;
    await Promise.all([
      newest !== null && following && newest !== state.step ? showStep(newest) : null,
      state.rows.length ? loadExamples() : null,
      state.followed !== null ? follow(state.followed, false) : null,
    ]);
  }

  function refreshQuietly() {
    return refresh().catch((error) => {
      $("eval-step-status").textContent = `Could not load the evaluations: ${error.message}. They load again on reconnection.`;
    });
  }

  RunPage.liveHandlers = RunPage.liveHandlers || {};
  RunPage.catchUps = RunPage.catchUps || [];
  RunPage.liveHandlers["run.evaluation"] = refreshQuietly;
  RunPage.catchUps.push(refreshQuietly);

  $("eval-step").addEventListener("change", () => pickStep(Number($("eval-step").value)));
  $("eval-outcome").addEventListener("change", () => { if (state.step !== null) showStep(state.step); });
  $("eval-more").addEventListener("click", () => { if (state.next) showStep(state.step, true); });
  $("eval-follow-newest").addEventListener("change", () => {
    if ($("eval-follow-newest").checked && newestStep() !== null) showStep(newestStep());
  });
  $("eval-class").addEventListener("change", () => { if (state.examples) renderExamples(); });
  $("eval-followed-close").addEventListener("click", closeFollowed);

  renderEvaluations();
  if (state.rows.length) {
    showStep(newestStep());
    loadExamples();
  }
})(window.RunPage = window.RunPage || {});
