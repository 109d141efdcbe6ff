// Run page: the alarms panel. Each alarm the run raised about its own signals (runs/alarms/) is
// a row: its step, what tripped (the names alarm_stop_on takes), the message with the numbers,
// and a mark when it stopped the run. Rows come with the page (#run-data), live as run.alarm,
// and from the API again after each reconnection; kept by id in step order, so one seen both
// live and in a re-fetch shows once.
(function (RunPage) {
  "use strict";

  const { element, fetchJson } = window.PageKit;
  const panel = document.getElementById("alarms");
  if (!panel) return;
  const data = JSON.parse(document.getElementById("run-data").textContent);
  const alarms = new Map();

  function row(alarm) {
    return element("li", { class: "alarm", "data-alarm": alarm.id, "data-kind": alarm.kind },
      element("span", { class: "alarm-step", text: `step ${alarm.step}` }),
      element("code", { class: "alarm-kind", title: data.alarm_kinds[alarm.kind], text: alarm.kind }),
      element("span", { class: "alarm-message", text: alarm.message }),
      alarm.stopped_run ? element("span", { class: "badge alarm-stopped", text: "stopped the run" }) : null);
  }

  function add(list) {
    for (const alarm of list) alarms.set(alarm.id, alarm);
    const rows = [...alarms.values()].sort((a, b) => a.step - b.step || a.id - b.id).map(row);
    panel.querySelector("#alarm-list").replaceChildren(...rows);
    panel.querySelector("#alarms-count").textContent = String(rows.length);
    panel.hidden = rows.length === 0;
  }

  RunPage.liveHandlers["run.alarm"] = (alarm) => add([alarm]);
  RunPage.catchUps.push(() => fetchJson(data.alarm_url).then(add));
  add(data.alarms);
})(window.RunPage = window.RunPage || {});
