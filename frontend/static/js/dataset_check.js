// A dataset whose large upload is being checked by the control plane's consumer: its progress
// (rows, bytes) is read from the API every second, and once the check has ended (ready or refused)
// the page's content is swapped for the server's fresh rendering of it (rows, preview, or why it
// was refused), without reloading.
(function () {
  "use strict";

  const { fetchJson, formatBytes } = window.PageKit;
  const box = document.getElementById("dataset-check");
  if (!box) return;
  const POLL_MS = 1000;

  function showProgress(progress) {
    const bar = document.getElementById("check-progress");
    const read = progress.bytes === null || progress.bytes === undefined ? "" :
      `, ${formatBytes(progress.bytes)} of ${formatBytes(progress.total_bytes)}`;
    if (read) bar.value = progress.bytes;
    document.getElementById("check-progress-text").textContent = `${progress.rows || 0} rows checked${read}`;
  }

  async function showFinished() {
    const response = await fetch(window.location.href, { credentials: "same-origin" });
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("main");
    document.getElementById("main").replaceChildren(...fresh.childNodes);
  }

  async function poll() {
    try {
      const dataset = await fetchJson(box.getAttribute("data-api"));
      if (dataset.state !== "checking") { await showFinished(); return; }
      showProgress(dataset.check_progress);
    } catch (error) {
      document.getElementById("check-progress-text").textContent = `Could not read the check's progress: ${error.message}`;
    }
    setTimeout(poll, POLL_MS);
  }
  setTimeout(poll, POLL_MS);
})();
