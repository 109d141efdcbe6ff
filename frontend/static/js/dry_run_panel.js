// dry_run_panel.js — the dry run panel of a reward or an environment (templates/library/_dry_run_panel.html),
// loaded before the kind's script, which says what differs: what is asked and how the answer shows.
//
//   const panel = DryRunPanel.start({
//     requestBody: () => ({...}),            // (may be async) the POST's body; throw an Error to refuse
//     runningText: () => "Running…",         // the status while the request is answered
//     followingText: (answer) => "...",      // the status while a queued dry run is followed
//     render: (result) => {...},             // the result, in #dry-results and #dry-status
//   });
//   panel.config, panel.root; DryRunPanel.$(id), .option(value, text), .milliseconds(seconds)
//
// The panel fills the datasets, sends the body (after saving an edited source), follows a queued dry
// run (one a model plays or scores on the control plane's consumer: the answer is where to poll it)
// every second until it is done or failed, and runs on its button or Ctrl+Enter. Model output is
// written with textContent (untrusted text).
(function () {
  "use strict";

  const { element, fetchJson, problemLines, saveEditedSource } = window.PageKit;
  const POLL_MS = 1000;
  const QUEUED_HINT = " (waiting for the control plane's consumer, which `make run` starts)";

  function $(id) {
    return document.getElementById(id);
  }

  function option(value, text) {
    return element("option", { value, text });
  }

  function milliseconds(seconds) {
    return `${(seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1)} ms`;
  }

  function fillDatasets(config) {
    config.datasets.forEach((dataset) => $("dry-dataset").append(option(dataset.id, dataset.name)));
    if (!config.datasets.length) $("dry-dataset").append(option("", "no datasets yet: create one first"));
    if (config.dataset) $("dry-dataset").value = String(config.dataset);
  }

  /* Polls a queued dry run, showing how far it is, until it is done (its result) or failed. */
  async function followed(dryRun, followingText) {
    for (let answer = dryRun; ; answer = await fetchJson(dryRun.url)) {
      if (answer.state === "done") return answer.result;
      if (answer.state === "failed") throw new Error(`The dry run failed: ${answer.error}`);
      $("dry-status").textContent = followingText(answer) + (answer.state === "queued" ? QUEUED_HINT : "…");
      await new Promise((resolve) => { setTimeout(resolve, POLL_MS); });
    }
  }

  function start(kind) {
    const config = JSON.parse($("dry-run-config").textContent);
    const root = $("dry-run");
    fillDatasets(config);

    async function run() {
      $("dry-errors").textContent = "";
      $("dry-status").textContent = kind.runningText();
      $("dry-run-button").disabled = true;
      try {
        const body = await kind.requestBody();
        await saveEditedSource(config.sourceApi);
        const answer = await fetchJson(config.url, { method: "POST", body });
        kind.render(answer.url && answer.state ? await followed(answer, kind.followingText) : answer);
      } catch (error) {
        $("dry-status").textContent = "";
        $("dry-errors").textContent = problemLines(error);
      } finally {
        $("dry-run-button").disabled = false;
      }
    }

    $("dry-run-button").addEventListener("click", run);
    root.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); run(); }
    });
    return { config, root };
  }

  window.DryRunPanel = { start, $, option, milliseconds };
})();
