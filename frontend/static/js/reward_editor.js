// Code editor of rewards and environments: CodeMirror on the form's textarea, with the lines that
// errors name highlighted. The editor config (#editor-config) may name the textarea, the save
// button and the label (defaults: the reward page's).
(function () {
  "use strict";

  const { element } = window.PageKit;
  const configNode = document.getElementById("editor-config");
  const config = configNode ? JSON.parse(configNode.textContent) : {};
  const textarea = document.getElementById(config.textarea || "reward-source");
  if (!textarea || typeof CodeMirror === "undefined") return; // without scripts the textarea still works
  const marked = [];

  function leaveEditor() {
    const next = document.getElementById(config.saveButton || "reward-save") || document.getElementById("dry-dataset");
    if (next) next.focus();
  }

  function indentOrSpaces(cm) {
    if (cm.somethingSelected()) cm.execCommand("indentMore");
    else cm.replaceSelection(" ".repeat(cm.getOption("indentUnit")), "end");
  }

  const editor = CodeMirror.fromTextArea(textarea, {
    mode: "python", lineNumbers: true, indentUnit: 4, tabSize: 4, indentWithTabs: false,
    readOnly: config.readOnly, viewportMargin: Infinity,
    extraKeys: { Tab: indentOrSpaces, "Shift-Tab": "indentLess", Esc: leaveEditor },
  });
  const input = editor.getInputField();
  input.setAttribute("aria-label", config.label || "Reward code");
  input.setAttribute("aria-describedby", `${textarea.id}-help`);
  let generation = editor.changeGeneration();

  function clearErrors() {
    marked.splice(0).forEach((handle) => {
      editor.removeLineClass(handle, "wrap", "cm-error-line");
      editor.removeLineClass(handle, "gutter", "cm-error-gutter");
    });
  }

  function markErrors(lines) {
    clearErrors();
    lines.forEach((line) => {
      const index = Math.min(Math.max(line - 1, 0), editor.lineCount() - 1);
      const handle = editor.addLineClass(index, "wrap", "cm-error-line");
      editor.addLineClass(index, "gutter", "cm-error-gutter");
      marked.push(handle);
    });
    if (lines.length) editor.scrollIntoView({ line: lines[0] - 1, ch: 0 }, 80);
  }

  function goToLine(line) {
    editor.focus();
    editor.setCursor({ line: line - 1, ch: 0 });
    editor.scrollIntoView(null, 80);
  }

  // "line 4: ..." in an error message becomes a button that jumps there.
  function showErrors(messages) {
    const box = document.getElementById("source-errors");
    box.textContent = "";
    const lines = [];
    messages.forEach((message) => {
      const match = /^line (\d+)/.exec(message);
      if (!match) {
        box.append(element("p", { class: "error", text: message }));
        return;
      }
      const line = Number(match[1]);
      lines.push(line);
      const jump = element("button", { type: "button", class: "link jump", text: match[0] });
      jump.addEventListener("click", () => goToLine(line));
      box.append(element("p", { class: "error" }, jump, message.slice(match[0].length)));
    });
    markErrors(lines);
  }

  const initial = Array.from(document.querySelectorAll("#source-errors p")).map((p) => p.textContent);
  if (initial.length) showErrors(initial);
  editor.on("change", () => { if (marked.length) clearErrors(); });

  window.rewardEditor = {
    source: () => editor.getValue(),
    isDirty: () => !editor.isClean(generation),
    markSaved: () => { generation = editor.changeGeneration(); },
    readOnly: config.readOnly,
    showErrors,
    markErrors,
  };
})();
