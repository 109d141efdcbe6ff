// New run: choosing a config fills the model, the pool and the inline editor with that
// config's values; changing a knob in the editor ticks "use the settings below".
// The form works without it (the server fills the editor from the config chosen at load).
(function () {
  "use strict";

  const form = document.getElementById("new-run-form");
  if (!form) return;
  const values = JSON.parse(document.getElementById("config-values").textContent);
  const template = document.getElementById("id_config_template");
  const editToggle = document.getElementById("id_edit_config");
  const PREFIX = "cfg-";

  function show(value) {
    if (value === null || value === undefined) return "";
    return String(value);
  }

  function fillKnob(name, value) {
    const input = form.elements[PREFIX + name];
    if (!input) return;
    if (input.type === "checkbox") input.checked = Boolean(value);
    else input.value = show(value);
  }

  function applyTemplate() {
    const chosen = values[template.value] || values[""];
    for (const [name, value] of Object.entries(chosen)) fillKnob(name, value);
    form.elements.model.value = chosen.model;
    form.elements.worker_pool.value = chosen.worker_pool;
  }

  template.addEventListener("change", applyTemplate);
  form.addEventListener("input", (event) => {
    if (event.target.name && event.target.name.startsWith(PREFIX)) editToggle.checked = true;
  });
  // After a refused submit, the cursor goes to the first input with a problem.
  if (document.getElementById("error-summary")) {
    const first = form.querySelector("[aria-invalid=true]");
    if (first) first.focus();
  }
})();
