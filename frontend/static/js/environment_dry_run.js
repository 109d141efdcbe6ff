// An environment's dry run panel (dry_run_panel.js): choose a row, type the assistant's turns (or let
// the model play: queued, followed queued → loading → turn k of n → done), and show the episode turn
// by turn (episode_view.js), the way it ended, each sandbox call's time and output, and an error
// with its traceback and line (marked in the editor).
(function () {
  "use strict";

  const { element, fetchJson, problemLines } = window.PageKit;
  const { $, option, milliseconds } = window.DryRunPanel;
  const { config, root: panel } = window.DryRunPanel.start({
    requestBody,
    render,
    runningText: () => (player() === "model" ? "Asking the model to play…" : "Playing…"),
    followingText: (answer) => `The model is playing: ${answer.progress}`,
  });
  const END_TEXT = {
    done: "the environment ended the episode", max_turns: "it reached the turn limit (or the typed turns ran out)",
    max_tokens: "it reached the token budget", context: "the context is full",
    environment_error: "the environment failed", environment_timeout: "the environment took too long",
  };

  // --- choices -------------------------------------------------------------------------------
  config.models.forEach((model) => $("dry-model-select").append(option(model.value, model.label)));
  $("dry-max-turns").max = config.maxTurns;
  if (!config.models.length) {
    $("dry-player-model").disabled = true;
    $("dry-model-problem").hidden = false;
    $("dry-model-problem").textContent = `The model cannot play here: ${config.modelProblem}`;
  }

  function player() {
    return panel.querySelector("input[name=dry-player]:checked").value;
  }
  panel.querySelectorAll("input[name=dry-player]").forEach((radio) => {
    radio.addEventListener("change", () => {
      $("dry-typed").hidden = player() !== "typed";
      $("dry-model").hidden = player() !== "model";
    });
  });

  function rowIndex() {
    return Math.max(parseInt($("dry-row").value, 10) || 1, 1) - 1;
  }

  // --- the row -------------------------------------------------------------------------------
  async function showRow() {
    const index = rowIndex();
    const url = `${config.rowsUrl}?dataset=${encodeURIComponent($("dry-dataset").value)}&rows=${index + 1}`;
    const body = await fetchJson(url);
    const row = body.rows[index];
    if (!row) throw new Error(`The dataset has ${body.rows.length} rows here; choose a row up to that.`);
    const columns = Object.entries(row.columns).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
    $("dry-row-view").replaceChildren(element("div", { class: "dry-row" },
      element("p", { class: "dry-prompt", text: `Row ${index + 1}: ${row.prompt}` }),
      columns.length ? element("p", { class: "hint dry-columns", text: columns.join(" · ") }) : null));
  }

  // --- typed turns ---------------------------------------------------------------------------
  function addTurn(text = "") {
    const count = $("dry-turns").children.length;
    if (count >= config.maxTurns) return;
    const id = `dry-turn-${count}`;
    const area = element("textarea", { id, rows: 2, "data-turn": count });
    area.value = text;
    $("dry-turns").append(element("li", {}, element("label", { for: id, text: `Assistant turn ${count + 1}` }), area));
    $("dry-add-turn").disabled = count + 1 >= config.maxTurns;
  }

  function typedTurns() {
    const turns = Array.from(panel.querySelectorAll("textarea[data-turn]")).map((area) => area.value);
    while (turns.length && !turns[turns.length - 1].trim()) turns.pop();
    if (!turns.length) throw new Error("Type at least one assistant turn (or let the model play).");
    return turns;
  }

  // --- the call ------------------------------------------------------------------------------
  function requestBody() {
    if (!$("dry-dataset").value) throw new Error("Choose a dataset.");
    const body = { dataset: Number($("dry-dataset").value), row: rowIndex(), tool_call_format: $("dry-format").value };
    if (player() === "model") {
      const turns = Math.min(Math.max(parseInt($("dry-max-turns").value, 10) || 1, 1), config.maxTurns);
      return { ...body, model: $("dry-model-select").value, max_turns: turns };
    }
    const turns = typedTurns();
    return { ...body, turns, max_turns: turns.length };
  }

  // --- results -------------------------------------------------------------------------------
  function errorBlock(error) {
    const where = error.line ? ` (line ${error.line})` : "";
    const box = element("div", { class: "dry-error", id: "dry-episode-error" },
      element("strong", { text: `${error.kind.replace("_", " ")}${where}: ` }), error.message);
    if (error.traceback) box.append(element("pre", { class: "traceback", text: error.traceback }));
    return box;
  }

  function callsTable(calls) {
    const head = element("tr", {}, ...["Call", "Time", "Printed output"].map((text) => element("th", { text })));
    const rows = calls.map((call) => element("tr", { class: call.error ? "has-error" : null },
      element("td", { text: call.op }), element("td", { text: milliseconds(call.seconds) }),
      element("td", {}, call.output ? element("pre", { text: call.output }) : "—")));
    return element("details", { class: "dry-calls" }, element("summary", { text: `Sandbox calls (${calls.length})` }),
      element("table", { class: "table dry-table" }, element("thead", {}, head), element("tbody", {}, ...rows)));
  }

  function shownScore(score) {
    return score === null || score === undefined ? "None" : String(Number(score.toPrecision(6)));
  }

  /* What the rubric gives the episode: each reward (the environment's own marked) and the total. */
  function rubricTable(data) {
    const head = element("tr", {}, ...["Reward", "Weight", "Score"].map((text) => element("th", { text })));
    const rows = data.rubric.map((item) => element("tr", { class: item.error ? "has-error" : null },
      element("td", { text: item.environment ? `${item.name} (the environment's)` : item.name }),
      element("td", { text: String(item.weight) }),
      element("td", { class: "dry-score", text: item.error ? `error: ${item.error.message}` : shownScore(item.score) })));
    const total = element("tr", {}, element("th", { scope: "row", colspan: 2, text: "Reward of the episode" }),
      element("td", { class: "dry-score", id: "dry-reward", text: shownScore(data.reward) }));
    return element("table", { class: "table dry-table dry-rubric" }, element("thead", {}, head),
      element("tbody", {}, ...rows, total));
  }

  function render(data) {
    const parts = [];
    if (data.error) parts.push(errorBlock(data.error));
    if (data.tools.length) {
      parts.push(element("p", { class: "hint dry-tools", text: `Tools (${data.tool_call_format} format): `
        + data.tools.map((tool) => `${tool.name}(${tool.parameter})`).join(", ") }));
    }
    if (data.turns.length) parts.push(window.EpisodeView.episode({ turns: data.turns, end_reason: data.end_reason }));
    if (data.rubric.length) parts.push(rubricTable(data));
    if (data.calls.length) parts.push(callsTable(data.calls));
    $("dry-results").replaceChildren(...parts);
    const played = data.player === "model" ? `${data.model} played` : "typed turns";
    const ended = END_TEXT[data.end_reason] || data.end_reason;
    $("dry-status").textContent = `Ended: ${ended}. ${data.assistant_turns || 0} assistant turns (${played}), `
      + `${data.tool_calls || 0} tool calls, ${data.seconds.toFixed(2)} s.`;
    if (data.error && data.error.line && window.rewardEditor) window.rewardEditor.markErrors([data.error.line]);
  }

  $("dry-show-row").addEventListener("click", () => {
    $("dry-errors").textContent = "";
    showRow().catch((error) => { $("dry-errors").textContent = problemLines(error); });
  });
  $("dry-add-turn").addEventListener("click", () => addTurn());
  addTurn();
  addTurn();
})();
