// Dry run panel: pick rows, type completions (or take a run's samples), call the API, show scores.
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("dry-run-config").textContent);
  const $ = function (id) { return document.getElementById(id); };
  const panel = $("dry-run");
  const csrf = document.querySelector("[name=csrfmiddlewaretoken]").value;
  const typedValues = {}; // row index → text typed, kept when the rows are shown again

  function option(value, text) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    return o;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // --- choices -------------------------------------------------------------------------------
  config.datasets.forEach(function (d) { $("dry-dataset").append(option(d.id, d.name)); });
  if (!config.datasets.length) $("dry-dataset").append(option("", "no datasets yet: create one first"));
  $("dry-rows").max = config.maxRows;
  config.runs.forEach(function (r) { $("dry-run-select").append(option(r.id, r.name + " (#" + r.id + ")")); });
  $("dry-no-runs").hidden = config.runs.length > 0;

  function fillSteps() {
    const run = config.runs.find(function (r) { return String(r.id) === $("dry-run-select").value; });
    $("dry-step").textContent = "";
    (run ? run.steps : []).forEach(function (s) { $("dry-step").append(option(s, "step " + s)); });
    if (run && run.steps.length) $("dry-step").value = run.steps[run.steps.length - 1];
  }
  $("dry-run-select").addEventListener("change", fillSteps);
  fillSteps();

  function mode() { return panel.querySelector("input[name=dry-source]:checked").value; }
  panel.querySelectorAll("input[name=dry-source]").forEach(function (radio) {
    radio.addEventListener("change", function () {
      $("dry-typed").hidden = mode() !== "typed";
      $("dry-from-run").hidden = mode() !== "run";
    });
  });

  function rowCount() { return Math.min(Math.max(parseInt($("dry-rows").value, 10) || 1, 1), config.maxRows); }

  // --- typed completions ------------------------------------------------------------------------
  function rememberTyped() {
    panel.querySelectorAll("textarea[data-row]").forEach(function (t) { typedValues[t.dataset.row] = t.value; });
  }

  async function loadRows() {
    rememberTyped();
    const url = config.rowsUrl + "?dataset=" + encodeURIComponent($("dry-dataset").value) + "&rows=" + rowCount();
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    const body = await response.json();
    if (!response.ok) throw new Error(Object.values(body).join(" "));
    const box = $("dry-row-inputs");
    box.textContent = "";
    body.rows.forEach(function (row) {
      const item = el("div", "dry-row");
      item.append(el("p", "dry-prompt", "Row " + (row.index + 1) + ": " + row.prompt));
      const columns = Object.entries(row.columns).map(function (kv) { return kv[0] + " = " + JSON.stringify(kv[1]); });
      if (columns.length) item.append(el("p", "hint dry-columns", columns.join(" · ")));
      const label = el("label", "", "Completions for row " + (row.index + 1));
      label.htmlFor = "dry-completion-" + row.index;
      const area = el("textarea");
      area.id = "dry-completion-" + row.index;
      area.dataset.row = row.index;
      area.rows = 3;
      area.value = typedValues[row.index] || "";
      item.append(label, area);
      box.append(item);
    });
    return body.rows.length;
  }

  function typedCompletions() {
    const areas = Array.from(panel.querySelectorAll("textarea[data-row]"));
    return areas.map(function (area, i) {
      const parts = area.value.split(/^---[ \t]*$/m).map(function (p) { return p.replace(/^\n|\n$/g, ""); })
        .filter(function (p) { return p.trim() !== ""; });
      if (!parts.length) throw new Error("Row " + (i + 1) + " has no completion: type one, or show fewer rows.");
      if (parts.length > config.maxCompletions) throw new Error("Row " + (i + 1) + " has more than " + config.maxCompletions + " completions.");
      return parts;
    });
  }

  // --- the call --------------------------------------------------------------------------------
  async function send(url, method, body) {
    const response = await fetch(url, {
      method: method, credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = { detail: response.statusText }; }
    return { ok: response.ok, status: response.status, data: data };
  }

  function problems(data) {
    return Object.entries(data).map(function (kv) {
      const value = Array.isArray(kv[1]) ? kv[1].join(" ") : typeof kv[1] === "object" ? JSON.stringify(kv[1]) : kv[1];
      return kv[0] === "detail" ? value : kv[0] + ": " + value;
    }).join("\n");
  }

  async function saveSourceFirst() {
    const editor = window.rewardEditor;
    if (!editor || !config.sourceApi || editor.readOnly || !editor.isDirty()) return true;
    const saved = await send(config.sourceApi, "PATCH", { source: editor.source() });
    if (saved.ok) { editor.markSaved(); editor.showErrors([]); return true; }
    if (saved.data.source) editor.showErrors([].concat(saved.data.source));
    throw new Error("The code was not saved, so it was not run: " + problems(saved.data));
  }

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

  async function run() {
    $("dry-errors").textContent = "";
    $("dry-status").textContent = "Running…";
    $("dry-run-button").disabled = true;
    try {
      const body = await requestBody();
      await saveSourceFirst();
      const result = await send(config.url, "POST", body);
      if (!result.ok) throw new Error(problems(result.data));
      render(result.data);
    } catch (error) {
      $("dry-status").textContent = "";
      $("dry-errors").textContent = error.message;
    } finally {
      $("dry-run-button").disabled = false;
    }
  }

  // --- results ---------------------------------------------------------------------------------
  function shownScore(score) {
    if (score === null) return "None";
    return Number.isInteger(score) ? score.toFixed(1) : String(Number(score.toPrecision(6)));
  }

  function milliseconds(seconds) { return (seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1) + " ms"; }

  function errorBlock(error, output) {
    const box = el("div", "dry-error");
    box.append(el("strong", "", error.kind.replace("_", " ") + ": "), document.createTextNode(error.message));
    if (error.traceback) box.append(el("pre", "traceback", error.traceback));
    return box;
  }

  function render(data) {
    const table = el("table", "table dry-table");
    const head = el("thead");
    const headRow = el("tr");
    ["Row", "Prompt", "Completion", "Score", "Time per call"].forEach(function (h) { headRow.append(el("th", "", h)); });
    head.append(headRow);
    table.append(head);
    const errorLines = [];
    data.rows.forEach(function (row) {
      const body = el("tbody", row.error ? "dry-row-result has-error" : "dry-row-result");
      row.completions.forEach(function (completion, i) {
        const tr = el("tr");
        if (i === 0) {
          const span = row.completions.length;
          const index = el("th", "", String(row.index + 1)); index.rowSpan = span; index.scope = "rowgroup";
          const prompt = el("td", "dry-prompt-cell", row.prompt.length > 160 ? row.prompt.slice(0, 160) + "…" : row.prompt);
          prompt.title = row.prompt; prompt.rowSpan = span;
          tr.append(index, prompt);
        }
        tr.append(el("td", "dry-completion", completion));
        const score = row.scores ? row.scores[i] : null;
        tr.append(el("td", "dry-score", row.scores ? shownScore(score) : "—"));
        if (i === 0) { const time = el("td", "", milliseconds(row.seconds)); time.rowSpan = row.completions.length; tr.append(time); }
        body.append(tr);
      });
      if (row.error || row.output || row.note) {
        const tr = el("tr", "dry-detail");
        const td = el("td"); td.colSpan = 5;
        if (row.note) td.append(el("p", "hint", row.note));
        if (row.error) { td.append(errorBlock(row.error)); if (row.error.line) errorLines.push(row.error.line); }
        if (row.output) {
          const details = el("details");
          details.append(el("summary", "", "Printed output"), el("pre", "", row.output));
          td.append(details);
        }
        tr.append(td);
        body.append(tr);
      }
      table.append(body);
    });
    $("dry-results").textContent = "";
    $("dry-results").append(table);
    const s = data.summary;
    $("dry-status").textContent = s.calls + " call" + (s.calls === 1 ? "" : "s") + ", " + s.errors + " with errors, "
      + milliseconds(s.mean_seconds) + " per call on average.";
    if (errorLines.length && window.rewardEditor) window.rewardEditor.markErrors(errorLines);
  }

  $("dry-load-rows").addEventListener("click", function () {
    $("dry-errors").textContent = "";
    loadRows().catch(function (error) { $("dry-errors").textContent = error.message; });
  });
  $("dry-run-button").addEventListener("click", run);
  panel.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); run(); }
  });
})();
