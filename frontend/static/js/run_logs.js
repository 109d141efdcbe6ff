// Run page: the log panel. Lines are kept in id order and shown once each; while "follow"
// is on (and the panel is scrolled to its end) new lines scroll into view.
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
      this.add(lines);
      this.followBox.addEventListener("change", () => { if (this.followBox.checked) this.scrollToEnd(); });
    }

    add(lines) {
      // Reading the scroll position forces a layout; an empty panel is at its end anyway.
      const atEnd = this.list.childElementCount === 0 || this.isAtEnd();
      const fresh = lines.filter((line) => line.id > this.lastId).sort((a, b) => a.id - b.id);
      for (const line of fresh) {
        this.list.appendChild(this.row(line));
        this.lastId = line.id;
      }
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
