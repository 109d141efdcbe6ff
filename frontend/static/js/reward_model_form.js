// Judge and reward model form: show a field only while the field it depends on has its value
// (the scale for a score judge, the labels for a choice judge, base_url and the API key for an
// endpoint judge). Hidden fields are still sent: the schema ignores what does not apply.
(function () {
  "use strict";

  const form = document.getElementById("reward-model-form");
  if (!form) return;

  function valueOf(name) {
    const select = form.querySelector(`[data-param="${name}"]`);
    return select ? select.value : null;
  }

  function show() {
    form.querySelectorAll("[data-shown-when]").forEach((node) => {
      const [name, wanted] = node.dataset.shownWhen.split("=");
      node.hidden = valueOf(name) !== wanted;
    });
  }

  form.querySelectorAll("select[data-param]").forEach((select) => select.addEventListener("change", show));
  show();
})();
