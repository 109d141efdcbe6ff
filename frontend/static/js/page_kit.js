// page_kit.js — the few things every page script needs, loaded before them (base.html):
//
//   PageKit.element("td", {class: "num", text: "0.5", "data-run": 3}, child, "text", ...)
//       a DOM element; `text` sets textContent (model output and names are untrusted text),
//       other attributes are set as given, null/undefined/false ones and children left out.
//   await PageKit.fetchJson(url)                       // GET, the parsed JSON body
//   await PageKit.fetchJson(url, {method: "POST", body: {...}})
//       unsafe methods send the body as JSON with Django's CSRF token. A non-2xx answer
//       throws a PageKit.ApiError whose message is the server's (`detail`, or each field's
//       problems, also listed in `problems`) and which keeps `status` and the parsed `body`.
//   PageKit.problemLines(error)   the server's problems, one a line (an ApiError's or any error's message)
//   await PageKit.saveEditedSource(url)
//       a code editor's unsaved source PATCHed to `url` before a dry run runs it; throws, with the
//       problems shown in the editor, when the server refuses it (window.rewardEditor).
//   PageKit.formatNumber(0.123456) -> "0.1235"    4 significant digits, exponent when huge or tiny
//   PageKit.formatFixed(0.5, 3)    -> "0.500"     fixed decimals
//   PageKit.formatDuration(3725)   -> "1:02:05"   h:mm:ss, or m:ss under an hour
//   PageKit.formatBytes(2048)      -> "2.0 KiB"
// Each formatter shows a missing value (null, undefined, NaN) as "—".
(function () {
  "use strict";

  const MISSING = "—";
  const UNSAFE_METHODS = ["POST", "PUT", "PATCH", "DELETE"];
  const BYTE_UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB"];

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name === "text") node.textContent = value;
      else if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  /* An answer other than 2xx, with the server's words as the message (one problem per field). */
  class ApiError extends Error {
    constructor(status, body) {
      const problems = serverProblems(status, body);
      super(problems.join("; "));
      this.name = "ApiError";
      this.status = status;
      this.body = body;
      this.problems = problems;
    }
  }

  /* DRF answers {detail: "..."} or {field: ["problem", ...], ...}; anything else gets the status. */
  function serverProblems(status, body) {
    if (body && typeof body.detail === "string") return [body.detail];
    if (body && typeof body === "object") {
      const fields = Object.entries(body).map(([field, problems]) => `${field}: ${problemText(problems)}`);
      if (fields.length) return fields;
    }
    return [`The server answered ${status}.`];
  }

  function problemText(problems) {
    if (Array.isArray(problems)) return problems.map(problemText).join(" ");
    if (problems && typeof problems === "object") return JSON.stringify(problems);
    return String(problems);
  }

  /* The form token base.html renders for logged-in pages, else the cookie Django sets. */
  function csrfToken() {
    const input = document.querySelector("[name=csrfmiddlewaretoken]");
    if (input) return input.value;
    const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
    return cookie ? decodeURIComponent(cookie.slice("csrftoken=".length)) : "";
  }

  async function fetchJson(url, { method = "GET", body } = {}) {
    const headers = { Accept: "application/json" };
    const init = { method, headers, credentials: "same-origin" };
    if (UNSAFE_METHODS.includes(method.toUpperCase())) headers["X-CSRFToken"] = csrfToken();
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
    const parsed = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, parsed);
    return parsed;
  }

  function isMissing(value) {
    return value === null || value === undefined || Number.isNaN(value);
  }

  function formatNumber(value) {
    if (isMissing(value)) return MISSING;
    const size = Math.abs(value);
    if (size !== 0 && (size >= 1e6 || size < 1e-3)) return value.toExponential(2);
    return String(Number(value.toPrecision(4)));
  }

  function formatFixed(value, digits) {
    return isMissing(value) ? MISSING : Number(value).toFixed(digits);
  }

  function formatDuration(seconds) {
    if (isMissing(seconds)) return MISSING;
    const whole = Math.round(seconds);
    const hours = Math.floor(whole / 3600), minutes = Math.floor((whole % 3600) / 60), rest = whole % 60;
    const two = (n) => String(n).padStart(2, "0");
    return hours ? `${hours}:${two(minutes)}:${two(rest)}` : `${minutes}:${two(rest)}`;
  }

  function formatBytes(bytes) {
    if (isMissing(bytes)) return MISSING;
    let value = bytes, unit = 0;
    while (value >= 1024 && unit < BYTE_UNITS.length - 1) { value /= 1024; unit++; }
    return `${value.toFixed(unit ? 1 : 0)} ${BYTE_UNITS[unit]}`;
  }

  function problemLines(error) {
    return error.problems ? error.problems.join("\n") : error.message;
  }

  async function saveEditedSource(url) {
    const editor = window.rewardEditor;
    if (!editor || !url || editor.readOnly || !editor.isDirty()) return;
    try {
      await fetchJson(url, { method: "PATCH", body: { source: editor.source() } });
    } catch (error) {
      if (error.body && error.body.source) editor.showErrors([].concat(error.body.source));
      throw new Error(`The code was not saved, so it was not run: ${problemLines(error)}`);
    }
    editor.markSaved();
    editor.showErrors([]);
  }

  window.PageKit = Object.freeze({
    element, fetchJson, ApiError, formatNumber, formatFixed, formatDuration, formatBytes, problemLines,
    saveEditedSource,
  });
})();
