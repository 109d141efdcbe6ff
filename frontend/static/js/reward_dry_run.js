// A reward's dry run panel (dry_run_panel.js): pick rows, type completions (or take a run's samples),
// and show the scores. A judge's or a reward model's dry run is scored by the control plane's
// consumer, which the panel follows to its rows; a judge's raw answer shows beside the number
// parsed from it. Model output is written with textContent (untrusted text).
(function () {
  "use strict";

  const { element, fetchJson, problemLines } = window.PageKit;
  const { $, option, milliseconds } = window.DryRunPanel;
  const ANSWER_FOLD_CHARS = 200;
  const typedValues = {}; // row index → text typed, kept when the rows are shown again
  const { config, root: panel } = window.DryRunPanel.start({
    requestBody,
    render,
    runningText: () => "Running…",
    followingText: (answer) => `Dry run ${answer.state === "queued" ? "queued" : "running"}: ${answer.progress}`,
  });

  // --- choices -------------------------------------------------------------------------------
  $("dry-rows").max = config.maxRows;
  config.runs.forEach((run) => $("dry-run-select").append(option(run.id, `${run.name} (#${run.id})`)));
  $("dry-no-runs").hidden = config.runs.length > 0;

  function fillSteps() {
    const run = config.runs.find((r) => String(r.id) === $("dry-run-select").value);
    $("dry-step").textContent = "";
    (run ? run.steps : []).forEach((step) => $("dry-step").append(option(step, `step ${step}`)));
    if (run && run.steps.length) $("dry-step").value = run.steps[run.steps.length - 1];
  }
  $("dry-run-select").addEventListener("change", fillSteps);
  fillSteps();

  function mode() {
    return panel.querySelector("input[name=dry-source]:checked").value;
  }
  panel.querySelectorAll("input[name=dry-source]").forEach((radio) => {
    radio.addEventListener("change", () => {
      $("dry-typed").hidden = mode() !== "typed";
      $("dry-from-run").hidden = mode() !== "run";
    });
  });

  function rowCount() {
    return Math.min(Math.max(parseInt($("dry-rows").value, 10) || 1, 1), config.maxRows);
  }

  // --- typed completions ------------------------------------------------------------------------
  function rememberTyped() {
    panel.querySelectorAll("textarea[data-row]").forEach((area) => { typedValues[area.dataset.row] = area.value; });
  }

  function rowInput(row) {
    const item = element("div", { class: "dry-row" },
      element("p", { class: "dry-prompt", text: `Row ${row.index + 1}: ${row.prompt}` }));
    const columns = Object.entries(row.columns).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
    if (columns.length) item.append(element("p", { class: "hint dry-columns", text: columns.join(" · ") }));
    const id = `dry-completion-${row.index}`;
    const area = element("textarea", { id, "data-row": row.index, rows: 3 });
    area.value = typedValues[row.index] || ""; // a textarea's text is its value, not an attribute
    item.append(element("label", { for: id, text: `Completions for row ${row.index + 1}` }), area);
    return item;
  }

  async function loadRows() {
    rememberTyped();
    const url = `${config.rowsUrl}?dataset=${encodeURIComponent($("dry-dataset").value)}&rows=${rowCount()}`;
    const body = await fetchJson(url);
    $("dry-row-inputs").replaceChildren(...body.rows.map(rowInput));
    return body.rows.length;
  }

  function typedCompletions() {
    const areas = Array.from(panel.querySelectorAll("textarea[data-row]"));
    return areas.map((area, i) => {
      const parts = area.value.split(/^---[ \t]*$/m).map((part) => part.replace(/^\n|\n$/g, ""))
        .filter((part) => part.trim() !== "");
      if (!parts.length) throw new Error(`Row ${i + 1} has no completion: type one, or show fewer rows.`);
      if (parts.length > config.maxCompletions) throw new Error(`Row ${i + 1} has more than ${config.maxCompletions} completions.`);
      return parts;
    });
  }

  // --- the call --------------------------------------------------------------------------------
  async function requestBody() {
    if (mode() === "run") {
      if (!$("dry-run-select").value || !$("dry-step").value) throw new Error("Choose a run and a step.");
      return { run: Number($("dry-run-select").value), step: Number($("dry-step").value), rows: rowCount() };
    }
    if (!$("dry-dataset").value) throw new Error("Choose a dataset.");
    if (panel.querySelectorAll("textarea[data-row]").length !== rowCount()) {
      await loadRows();
      throw new Error("Type a completion for each row shown, then run again.");
    }
    return { dataset: Number($("dry-dataset").value), rows: rowCount(), completions: typedCompletions() };
  }

  // --- results ---------------------------------------------------------------------------------
  function shownScore(score) {
    if (score === null) return "None";
    return Number.isInteger(score) ? score.toFixed(1) : String(Number(score.toPrecision(6)));
  }

  function errorBlock(error) {
    const box = element("div", { class: "dry-error" },
      element("strong", { text: `${error.kind.replace("_", " ")}: ` }), error.message);
    if (error.traceback) box.append(element("pre", { class: "traceback", text: error.traceback }));
    return box;
  }

  /* A judge's raw answer (folded when long), any error parsing or getting it, and whether the cache answered. */
  function answerCell(answer) {
    const cell = element("td", { class: "dry-answer" });
    if (!answer) return cell;
    if (answer.raw !== null && answer.raw !== undefined) {
      const raw = answer.raw;
      cell.append(raw.length > ANSWER_FOLD_CHARS
        ? element("details", {}, element("summary", { text: `${raw.slice(0, ANSWER_FOLD_CHARS)}…` }), raw)
        : element("span", { class: "raw-answer", text: raw }));
    }
    if (answer.error) cell.append(element("p", { class: "error", text: answer.error }));
    if (answer.cached) cell.append(element("p", { class: "cached", text: "cached" }));
    return cell;
  }

  /* The first completion's row also holds the row number, prompt and time, spanning the others. */
  function completionRow(row, completion, i, judged) {
    const tr = element("tr");
    const span = row.completions.length;
    if (i === 0) {
      const prompt = row.prompt.length > 160 ? `${row.prompt.slice(0, 160)}…` : row.prompt;
      tr.append(element("th", { scope: "rowgroup", rowspan: span, text: String(row.index + 1) }),
        element("td", { class: "dry-prompt-cell", title: row.prompt, rowspan: span, text: prompt }));
    }
    tr.append(element("td", { class: "dry-completion", text: completion }),
      element("td", { class: "dry-score", text: row.scores ? shownScore(row.scores[i]) : "—" }));
    if (judged) tr.append(answerCell(row.answers ? row.answers[i] : null));
    if (i === 0) tr.append(element("td", { rowspan: span, text: milliseconds(row.seconds) }));
    return tr;
  }

  function detailRow(row, columns) {
    const cell = element("td", { colspan: columns });
    if (row.note) cell.append(element("p", { class: "hint", text: row.note }));
    if (row.error) cell.append(errorBlock(row.error));
    if (row.output) {
      cell.append(element("details", {}, element("summary", { text: "Printed output" }), element("pre", { text: row.output })));
    }
    return element("tr", { class: "dry-detail" }, cell);
  }

  function render(data) {
    const judged = data.rows.some((row) => row.answers);
    const headings = ["Row", "Prompt", "Completion", "Score", ...(judged ? ["Judge's answer"] : []), "Time per call"];
    const headRow = element("tr", {}, ...headings.map((heading) => element("th", { text: heading })));
    const table = element("table", { class: "table dry-table" }, element("thead", {}, headRow));
    const errorLines = [];
    data.rows.forEach((row) => {
      const body = element("tbody", { class: row.error ? "dry-row-result has-error" : "dry-row-result" },
        ...row.completions.map((completion, i) => completionRow(row, completion, i, judged)));
      if (row.error || row.output || row.note) body.append(detailRow(row, headings.length));
      if (row.error && row.error.line) errorLines.push(row.error.line);
      table.append(body);
    });
    $("dry-results").replaceChildren(table);
    const s = data.summary;
    $("dry-status").textContent = `${s.calls} call${s.calls === 1 ? "" : "s"}, ${s.errors} with errors, `
      + `${milliseconds(s.mean_seconds)} per call on average.`;
    if (errorLines.length && window.rewardEditor) window.rewardEditor.markErrors(errorLines);
  }

  $("dry-load-rows").addEventListener("click", () => {
    $("dry-errors").textContent = "";
    loadRows().catch((error) => { $("dry-errors").textContent = problemLines(error); });
  });
})();
