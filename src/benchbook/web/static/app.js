// Benchbook dashboard: small progressive enhancements; every page reads without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Selects that apply at once (filters, version switcher, workspace switcher, roles).
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form && select.form.requestSubmit());
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
