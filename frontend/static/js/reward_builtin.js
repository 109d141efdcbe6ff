// Built-in reward form: show the parameters of the chosen built-in only.
(function () {
  "use strict";

  const select = document.querySelector("[data-builtin-select]");
  if (!select) return;

  function show() {
    document.querySelectorAll("fieldset[data-builtin]").forEach((fieldset) => {
      const chosen = fieldset.dataset.builtin === select.value;
      fieldset.hidden = !chosen;
      fieldset.disabled = !chosen; // only the chosen built-in's parameters are sent
    });
  }

  select.addEventListener("change", show);
  show();
})();
