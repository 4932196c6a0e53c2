// Run page: live progress. Polls /runs/{id}/progress.json while the run is queued or running,
// updates the numbers in place, and reloads once the run has ended (so the scorecard shows).
"use strict";

(() => {
  const percent = (value) => (value === null || value === undefined ? "—" : `${(value * 100).toFixed(1)}%`);
  const usd = (value) => (value >= 100 ? `$${value.toFixed(2)}` : `$${value.toFixed(4)}`);
  const count = (value) => value.toLocaleString("en-US");
  const duration = (seconds) => {
    if (seconds === null || seconds === undefined) return "—";
    if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
    if (seconds < 60) return `${seconds.toFixed(1)} s`;
    const whole = Math.round(seconds);
    return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`;
  };

  function show(card, data) {
    const set = (name, text) => {
      for (const el of card.querySelectorAll(`[data-live="${name}"]`)) el.textContent = text;
    };
    set("percent", String(data.percent));
    set("done", count(data.done));
    set("total", count(data.total));
    set("pass_rate", percent(data.pass_rate));
    set("errors", count(data.errors));
    set("grader_errors", count(data.grader_errors || 0));
    set("spent_usd", usd(data.spent_usd));
    set("eta", duration(data.eta_s));
    const bar = card.querySelector('[data-live="bar"]');
    if (bar) bar.value = data.percent;
    const badge = document.querySelector('[data-testid="run-status"]');
    if (badge && badge.textContent !== data.status.replace("_", " ")) {
      badge.textContent = data.status.replace("_", " ");
      badge.className = `badge run-status run-${data.status}`;
    }
  }

  function start(card) {
    const url = card.dataset.progressUrl;
    const every = Number(card.dataset.pollMs) || 1000;
    const tick = async () => {
      try {
        const answer = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
        if (!answer.ok) throw new Error(String(answer.status));
        const data = await answer.json();
        show(card, data);
        if (data.ended) {
          card.dataset.ended = "true";
          window.location.reload();
          return;
        }
      } catch (_) {
        // a missed poll (server restarting, network blip): try again next time
      }
      window.setTimeout(tick, every);
    };
    window.setTimeout(tick, every);
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const card of document.querySelectorAll("[data-progress-url]")) {
      if (card.dataset.ended !== "true") start(card);
    }
  });
})();
