// New-dataset page. The upload form is sent with XMLHttpRequest to the REST API so that a big
// file shows its progress; the API's field errors are put next to the fields, and a stored
// dataset opens its page. Without this script the same form posts to the page itself.
// Also: a drop zone that fills the file input, and only the chosen generator's parameters.
(function () {
  "use strict";

  var form = document.getElementById("upload-form");
  if (form) setUpUpload(form);
  var generatorSelect = document.getElementById("generator-generator");
  if (generatorSelect) setUpGenerators(generatorSelect);

  function setUpUpload(form) {
    var input = document.getElementById("upload-file");
    var zone = document.getElementById("dropzone");
    var chosen = document.getElementById("upload-file-chosen");
    var nameInput = document.getElementById("upload-name");
    var maxBytes = Number(form.getAttribute("data-max-bytes"));

    ["dragenter", "dragover"].forEach(function (type) {
      zone.addEventListener(type, function (event) {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    });
    ["dragleave", "dragend"].forEach(function (type) {
      zone.addEventListener(type, function () { zone.classList.remove("dragging"); });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      zone.classList.remove("dragging");
      var files = event.dataTransfer && event.dataTransfer.files;
      if (!files || !files.length) return;
      input.files = files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    });

    input.addEventListener("change", function () {
      clearErrors(form);
      var file = input.files[0];
      if (!file) { chosen.textContent = ""; return; }
      chosen.textContent = file.name + " · " + humanSize(file.size);
      if (!nameInput.value.trim()) nameInput.value = file.name.replace(/\.[^.]+$/, "");
      if (file.size > maxBytes) {
        showError(form, "file", file.name + " is " + humanSize(file.size) + "; the limit is " + humanSize(maxBytes) + ".");
      }
    });

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      clearErrors(form);
      var file = input.files[0];
      if (file && file.size > maxBytes) {
        showError(form, "file", file.name + " is " + humanSize(file.size) + "; the limit is " + humanSize(maxBytes) + ".");
        input.focus();
        return;
      }
      send(form, file);
    });
  }

  function send(form, file) {
    var button = document.getElementById("upload-submit");
    var box = document.getElementById("upload-progress-box");
    var bar = document.getElementById("upload-progress");
    var text = document.getElementById("upload-progress-text");
    var body = new FormData(form);
    body.delete("csrfmiddlewaretoken");
    var request = new XMLHttpRequest();
    request.open("POST", form.getAttribute("data-api"));
    request.setRequestHeader("X-CSRFToken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    request.setRequestHeader("Accept", "application/json");
    request.upload.addEventListener("progress", function (event) {
      if (!event.lengthComputable) return;
      var percent = Math.floor((event.loaded / event.total) * 100);
      bar.value = percent;
      bar.textContent = percent + "%";
      text.textContent = "Uploading… " + percent + "% of " + humanSize(event.total);
    });
    request.upload.addEventListener("load", function () {
      bar.value = 100;
      text.textContent = "Uploaded; checking every row…";
    });
    request.addEventListener("load", function () { answered(form, request, button, box); });
    request.addEventListener("error", function () {
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
    var payload = parseJson(request.responseText);
    if (request.status === 201 && payload && payload.id) {
      document.getElementById("upload-progress-text").textContent = "Stored; opening the dataset…";
      window.location.assign(form.getAttribute("data-detail").replace(/\/0\/$/, "/" + payload.id + "/"));
      return;
    }
    done(button, box);
    if (request.status === 400 && payload && typeof payload === "object") {
      Object.keys(payload).forEach(function (field) { showError(form, field, messagesOf(payload[field])); });
    } else if (request.status === 413) {
      showError(form, "file", (payload && payload.detail) || "The file is too large; nothing was stored.");
    } else if (request.status === 403) {
      showError(form, "form", ((payload && payload.detail) || "Not allowed") + " — reload the page and log in again.");
    } else {
      showError(form, "form", "The server answered " + request.status + "; nothing was stored. Try again.");
    }
    var first = form.querySelector(".error:not([hidden])");
    var field = first && document.getElementById(first.id.replace(/-error$/, ""));
    if (field && field.focus) field.focus();
  }

  function done(button, box) {
    button.disabled = false;
    box.hidden = true;
  }

  function showError(form, field, message) {
    var node = document.getElementById("upload-" + field + "-error");
    if (!node) {
      node = document.getElementById("upload-form-error");
      message = (field === "form" || field === "non_field_errors" ? "" : field + ": ") + message;
    }
    node.textContent = node.hidden || !node.textContent ? message : node.textContent + " " + message;
    node.hidden = false;
    var input = document.getElementById("upload-" + field);
    if (input) input.setAttribute("aria-invalid", "true");
  }

  function clearErrors(form) {
    form.querySelectorAll(".error").forEach(function (node) { node.textContent = ""; node.hidden = true; });
    form.querySelectorAll("[aria-invalid]").forEach(function (node) { node.removeAttribute("aria-invalid"); });
  }

  function messagesOf(value) {
    if (Array.isArray(value)) return value.map(messagesOf).join(" ");
    if (value && typeof value === "object") {
      return Object.keys(value).map(function (key) { return key + ": " + messagesOf(value[key]); }).join(" ");
    }
    return String(value);
  }

  function parseJson(text) {
    try { return JSON.parse(text); } catch (error) { return null; }
  }

  function humanSize(bytes) {
    if (bytes < 1024) return bytes + " bytes";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KiB";
    return (bytes / (1024 * 1024)).toFixed(1) + " MiB";
  }

  function setUpGenerators(select) {
    var sets = document.querySelectorAll(".generator-params");
    function showChosen() {
      sets.forEach(function (set) { set.hidden = set.getAttribute("data-generator") !== select.value; });
    }
    select.addEventListener("change", showChosen);
    showChosen();
  }
})();
