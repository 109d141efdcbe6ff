// New-dataset page. The upload form is sent with XMLHttpRequest to the REST API so that a big
// file shows its progress; the API's field errors are put next to the fields, and a stored
// dataset opens its page. Without this script the same form posts to the page itself.
// Also: a drop zone that fills the file input, and only the chosen generator's parameters.
(function () {
  "use strict";

  const { formatBytes } = window.PageKit;
  const form = document.getElementById("upload-form");
  if (form) setUpUpload(form);
  const generatorSelect = document.getElementById("generator-generator");
  if (generatorSelect) setUpGenerators(generatorSelect);

  function setUpUpload(form) {
    const input = document.getElementById("upload-file");
    const zone = document.getElementById("dropzone");
    const chosen = document.getElementById("upload-file-chosen");
    const nameInput = document.getElementById("upload-name");
    const maxBytes = Number(form.getAttribute("data-max-bytes"));
    const tooBig = (file) => `${file.name} is ${formatBytes(file.size)}; the limit is ${formatBytes(maxBytes)}.`;

    ["dragenter", "dragover"].forEach((type) => {
      zone.addEventListener(type, (event) => {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    });
    ["dragleave", "dragend"].forEach((type) => {
      zone.addEventListener(type, () => { zone.classList.remove("dragging"); });
    });
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("dragging");
      const files = event.dataTransfer && event.dataTransfer.files;
      if (!files || !files.length) return;
      input.files = files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    });

    input.addEventListener("change", () => {
      clearErrors(form);
      const file = input.files[0];
      if (!file) { chosen.textContent = ""; return; }
      chosen.textContent = `${file.name} · ${formatBytes(file.size)}`;
      if (!nameInput.value.trim()) nameInput.value = file.name.replace(/\.[^.]+$/, "");
      if (file.size > maxBytes) showError(form, "file", tooBig(file));
    });

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      clearErrors(form);
      const file = input.files[0];
      if (file && file.size > maxBytes) {
        showError(form, "file", tooBig(file));
        input.focus();
        return;
      }
      send(form, file);
    });
  }

  function send(form, file) {
    const button = document.getElementById("upload-submit");
    const box = document.getElementById("upload-progress-box");
    const bar = document.getElementById("upload-progress");
    const text = document.getElementById("upload-progress-text");
    const body = new FormData(form);
    body.delete("csrfmiddlewaretoken");
    // XMLHttpRequest rather than PageKit.fetchJson: fetch cannot report upload progress.
    const request = new XMLHttpRequest();
    request.open("POST", form.getAttribute("data-api"));
    request.setRequestHeader("X-CSRFToken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    request.setRequestHeader("Accept", "application/json");
    request.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      const percent = Math.floor((event.loaded / event.total) * 100);
      bar.value = percent;
      bar.textContent = `${percent}%`;
      text.textContent = `Uploading… ${percent}% of ${formatBytes(event.total)}`;
    });
    request.upload.addEventListener("load", () => {
      bar.value = 100;
      text.textContent = "Uploaded; storing it (a small file's rows are checked now)…";
    });
    request.addEventListener("load", () => { answered(form, request, button, box); });
    request.addEventListener("error", () => {
      done(button, box);
      showError(form, "form", "The upload did not reach the server (network error); nothing was stored. Try again.");
    });
    button.disabled = true;
    box.hidden = false;
    bar.value = 0;
    text.textContent = file ? "Uploading…" : "Sending…";
    request.send(body);
  }

  function answered(form, request, button, box) {
    const payload = parseJson(request.responseText);
    if (request.status === 201 && payload && payload.id) {
      document.getElementById("upload-progress-text").textContent = payload.state === "checking"
        ? "Stored; its rows are checked apart from this page, which opens the dataset…" : "Stored; opening the dataset…";
      window.location.assign(form.getAttribute("data-detail").replace(/\/0\/$/, `/${payload.id}/`));
      return;
    }
    done(button, box);
    if (request.status === 400 && payload && typeof payload === "object") {
      Object.keys(payload).forEach((field) => { showError(form, field, messagesOf(payload[field])); });
    } else if (request.status === 413) {
      showError(form, "file", (payload && payload.detail) || "The file is too large; nothing was stored.");
    } else if (request.status === 403) {
      showError(form, "form", `${(payload && payload.detail) || "Not allowed"} — reload the page and log in again.`);
    } else {
      showError(form, "form", `The server answered ${request.status}; nothing was stored. Try again.`);
    }
    const first = form.querySelector(".error:not([hidden])");
    const field = first && document.getElementById(first.id.replace(/-error$/, ""));
    if (field && field.focus) field.focus();
  }

  function done(button, box) {
    button.disabled = false;
    box.hidden = true;
  }

  function showError(form, field, message) {
    let node = document.getElementById(`upload-${field}-error`);
    if (!node) {
      node = document.getElementById("upload-form-error");
      message = (field === "form" || field === "non_field_errors" ? "" : `${field}: `) + message;
    }
    node.textContent = node.hidden || !node.textContent ? message : `${node.textContent} ${message}`;
    node.hidden = false;
    const input = document.getElementById(`upload-${field}`);
    if (input) input.setAttribute("aria-invalid", "true");
  }

  function clearErrors(form) {
    form.querySelectorAll(".error").forEach((node) => { node.textContent = ""; node.hidden = true; });
    form.querySelectorAll("[aria-invalid]").forEach((node) => { node.removeAttribute("aria-invalid"); });
  }

  function messagesOf(value) {
    if (Array.isArray(value)) return value.map(messagesOf).join(" ");
    if (value && typeof value === "object") {
      return Object.keys(value).map((key) => `${key}: ${messagesOf(value[key])}`).join(" ");
    }
    return String(value);
  }

  function parseJson(text) {
    try { return JSON.parse(text); } catch (error) { return null; }
  }

  function setUpGenerators(select) {
    const sets = document.querySelectorAll(".generator-params");
    function showChosen() {
      sets.forEach((set) => { set.hidden = set.getAttribute("data-generator") !== select.value; });
    }
    select.addEventListener("change", showChosen);
    showChosen();
  }
})();
