// Benchbook dashboard: small progressive enhancements; every page reads without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Selects that apply at once (filters, version switcher, workspace switcher, roles).
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form && select.form.requestSubmit());
  }
  // The cases table's column picker applies each tick at once (the button stays for no-JS).
  // It reopens after the reload (picker=true) so several ticks need no reopening.
  for (const form of document.querySelectorAll("form[data-autosubmit-form]")) {
    for (const input of form.querySelectorAll("[data-when-js]")) input.disabled = false;
    form.addEventListener("change", () => form.requestSubmit());
  }

  // Comment composer: Ctrl+Enter / Cmd+Enter posts.
  for (const form of document.querySelectorAll("form[data-composer]")) {
    const area = form.querySelector("textarea");
    area.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        if (area.value.trim()) form.requestSubmit();
      }
    });
  }

  // Dialogs (danger dialog).
  for (const button of document.querySelectorAll("[data-open-dialog]")) {
    const dialog = document.getElementById(button.dataset.openDialog);
    button.addEventListener("click", () => dialog.showModal());
  }
  for (const button of document.querySelectorAll("[data-close-dialog]")) {
    button.addEventListener("click", () => button.closest("dialog").close());
  }

  // Destructive forms (data-confirm="question"): ask in a dialog first; OK submits.
  const confirmDialog = document.getElementById("confirm-dialog");
  let pending = null;
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (form.dataset.confirmed === "yes" || !confirmDialog) return;
      event.preventDefault();
      pending = form;
      confirmDialog.querySelector("#confirm-text").textContent = form.dataset.confirm;
      confirmDialog.querySelector("[data-confirm-ok]").textContent =
        form.dataset.confirmLabel || "Confirm";
      confirmDialog.returnValue = "";
      confirmDialog.showModal();
    });
  }
  if (confirmDialog) {
    confirmDialog.addEventListener("close", () => {
      const form = pending;
      pending = null;
      if (form && confirmDialog.returnValue === "ok") {
        form.dataset.confirmed = "yes";
        form.requestSubmit();
      }
    });
  }

  // A dialog whose form came back refused opens again (data-open-on-load).
  for (const dialog of document.querySelectorAll("dialog[data-open-on-load]")) {
    dialog.showModal();
  }

  // j / k: next / previous case (dataset page: focus moves between cases; case page: opens
  // the next or previous case). Typing in a field is left alone.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "j" && event.key !== "k") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
    const summaries = [...document.querySelectorAll("ol.cases summary")];
    if (summaries.length) {
      const at = summaries.indexOf(document.activeElement.closest("summary"));
      const next = event.key === "j" ? Math.min(at + 1, summaries.length - 1) : Math.max(at - 1, 0);
      summaries[at === -1 ? 0 : next].focus();
      event.preventDefault();
      return;
    }
    const link = document.querySelector(event.key === "j" ? "a[rel=next][data-testid=next-case]"
      : "a[rel=prev][data-testid=previous-case]");
    if (link) link.click();
  });

  // Register: editing after a passing Validate asks for a new Validate.
  for (const form of document.querySelectorAll("form[data-register]")) {
    const register = form.querySelector("[data-needs-validation]");
    form.addEventListener("input", () => {
      register.disabled = true;
      register.setAttribute("aria-disabled", "true");
    });
  }

  // Copy buttons (new API key).
  for (const button of document.querySelectorAll("[data-copy]")) {
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        button.textContent = "Copied";
      } catch (_) {
        button.textContent = "Select and copy";
      }
    });
  }
});
