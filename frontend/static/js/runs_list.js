// Runs list: the compare form sends the ticked runs as one comma-separated parameter,
// /compare/?runs=1,2,3, the shape the compare page reads (without this script the browser
// sends runs=1&runs=2, which the compare page may also accept).
(function () {
  "use strict";

  const form = document.getElementById("compare-form");
  if (!form) return;
  const hint = document.getElementById("compare-hint");
  const MIN = 2, MAX = 8;

  function picked() {
    return Array.from(form.querySelectorAll("input[name=runs]:checked")).map((box) => box.value);
  }

  function describe() {
    const count = picked().length;
    hint.textContent = count < MIN ? `Tick ${MIN} to ${MAX} runs to compare them side by side (${count} ticked).`
      : count > MAX ? `At most ${MAX} runs can be compared; ${count} are ticked.`
      : `${count} runs ticked.`;
    hint.classList.toggle("error", count > MAX);
  }

  form.addEventListener("change", describe);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const ids = picked();
    if (ids.length < MIN || ids.length > MAX) {
      describe();
      hint.classList.add("error");
      return;
    }
    window.location.assign(`${form.getAttribute("action")}?runs=${ids.join(",")}`);
  });
})();
