// Config form: preset buttons fill the knobs in place (keeping the name and description a
// person typed; without this script they are links that reload the form filled), and a
// refused save moves focus to the list of problems.
(function () {
  "use strict";

  const dataNode = document.getElementById("config-presets");
  const fields = document.querySelector(".config-fields");
  if (!dataNode || !fields) return;
  const data = JSON.parse(dataNode.textContent);
  const note = document.getElementById("preset-note");

  function setKnob(name, value) {
    // Found by knob name, whatever prefix the page gave the inputs.
    const input = fields.querySelector(`[data-knob="${name}"] select, [data-knob="${name}"] input:not([type=hidden])`);
    if (!input) return;
    if (input.type === "checkbox") {
      input.checked = Boolean(value);
    } else {
      input.value = value === null || value === undefined ? "" : String(value);
    }
  }

  function fill(key, label) {
    const values = key ? data.presets[key] : data.defaults;
    if (!values) return false;
    Object.keys(values).forEach((name) => setKnob(name, values[name]));
    if (note) note.textContent = `Filled from ${label}; nothing is saved until you press Save config.`;
    return true;
  }

  document.querySelectorAll("[data-preset]").forEach((button) => {
    button.setAttribute("role", "button");
    button.addEventListener("click", (event) => {
      if (fill(button.getAttribute("data-preset"), button.textContent.trim())) event.preventDefault();
    });
  });

  const summary = document.getElementById("error-summary");
  if (summary) summary.focus();
})();
