// Run page: the log panel. Lines are kept in id order and shown once each; while "follow"
// is on (and the panel is scrolled to its end) new lines scroll into view. A select shows only
// warnings and errors, or only errors, with how many there are, so they are found at a glance.
(function (RunPage) {
  "use strict";

  const { element } = window.PageKit;
  const MAX_LINES = 2000;

  class LogPanel {
    constructor(root, lines) {
      this.list = root.querySelector("#log-lines");
      this.empty = root.querySelector("#logs-empty");
      this.followBox = root.querySelector("#log-follow");
      this.lastId = 0;
      this.counts = { warning: 0, error: 0 };
      this.levelBox = this.levelSelect();
      this.followBox.closest("label").before(this.levelBox);
      this.add(lines);
      this.followBox.addEventListener("change", () => { if (this.followBox.checked) this.scrollToEnd(); });
      this.levelBox.addEventListener("change", () => {
        this.list.dataset.show = this.levelBox.value;
        this.scrollToEnd();
      });
    }

    levelSelect() {
      const option = (value) => element("option", { value });
      const box = element("select", { id: "log-level", "aria-label": "Log lines shown" },
        option("all"), option("warning"), option("error"));
      box.value = this.list.dataset.show || "all";
      return box;
    }

    showCounts() {
      const [all, warning, error] = this.levelBox.options;
      const { warning: warnings, error: errors } = this.counts;
      all.textContent = "all lines";
      warning.textContent = `warnings and errors (${warnings + errors})`;
      error.textContent = `errors (${errors})`;
    }

    add(lines) {
      // Reading the scroll position forces a layout; an empty panel is at its end anyway.
      const atEnd = this.list.childElementCount === 0 || this.isAtEnd();
      const fresh = lines.filter((line) => line.id > this.lastId).sort((a, b) => a.id - b.id);
      for (const line of fresh) {
        this.list.appendChild(this.row(line));
        this.lastId = line.id;
        if (line.level in this.counts) this.counts[line.level] += 1;
      }
      this.showCounts();
      while (this.list.childElementCount > MAX_LINES) this.list.firstElementChild.remove();
      this.empty.hidden = this.list.childElementCount > 0;
      if (fresh.length && this.followBox.checked && atEnd) this.scrollToEnd();
    }

    row(line) {
      const time = element("time", { datetime: line.time, text: new Date(line.time).toLocaleTimeString() });
      return element("li", { class: `log-${line.level}` }, time, " ",
        element("span", { class: "log-source", text: line.source }), " ",
        element("span", { class: "log-message", text: line.message }));
    }

    isAtEnd() {
      const box = this.list;
      return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    }

    scrollToEnd() {
      // In the next frame, when the browser lays the page out anyway.
      requestAnimationFrame(() => { this.list.scrollTop = this.list.scrollHeight; });
    }
  }

  RunPage.LogPanel = LogPanel;
})(window.RunPage = window.RunPage || {});
