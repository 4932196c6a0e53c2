// Import wizard: upload, catalog or Hugging Face search → preview with clickable column roles → import with progress.
"use strict";

(() => {
  const ROLES = ["task", "id", "answer"];
  const $ = (id) => document.getElementById(id);
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
  const state = { kind: "upload", uploadId: null, fileName: null, picked: null, fields: [], rows: [], roles: {}, guess: {}, existing: [], plan: null, planId: "", timer: null,
    suggestedId: "", matches: [], keepUpload: false, gradersTouched: false,
    hf: { dataset: null, gated: false, refused: false, splits: [], files: [], revision: null } };
  // Upload and Hugging Face sources are mapped here; a catalog entry or a registered recipe
  // brings its own mapping, graders and lineage.
  const ownMapping = () => state.kind === "upload" || state.kind === "hf";
  const hasToken = () => document.getElementById("wizard").dataset.hasToken === "yes";

  async function call(method, url, body, isForm) {
    const headers = { "X-CSRF-Token": csrf() };
    if (!isForm && body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, { method, headers, body: isForm ? body : body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
    const data = await response.json().catch(() => ({ message: response.statusText }));
    if (!response.ok) {
      const errors = (data.details && data.details.errors) || [];
      const message = data.message || "request failed";
      const where = errors.filter((e) => !message.includes(e.message)).slice(0, 5).map((e) => `${e.path}: ${e.message}`).join("; ");
      const failure = new Error(message + (where ? ` (${where})` : ""));
      failure.details = data.details || {};
      throw failure;
    }
    return data;
  }

  // An error is shown beside the step that caused it (the source, the column roles, the answer
  // extraction, the dataset id, the import) and scrolled into view.
  const ERROR_SLOTS = { source: "source-status", map: "map-error", extract: "extract-error", id: "id-error", import: "import-error" };

  function clearErrors() {
    for (const el of document.querySelectorAll("[data-step-error]")) { el.hidden = true; el.textContent = ""; }
    $("source-status").classList.remove("field-error");
  }

  function stepOf(error, fallback) {
    const paths = ((error.details && error.details.errors) || []).map((e) => String(e.path || ""));
    const where = paths.join(" ") + " " + error.message;
    if (/answer_pattern/.test(where)) return "extract";
    if (paths.some((p) => p === "id" || p === "spec.id")) return "id";
    if (paths.some((p) => /(^|\.)mapping\b|^grader/.test(p))) return "map";
    return fallback;
  }

  function showError(step, message) {
    const el = $(ERROR_SLOTS[step]);
    el.textContent = message;
    el.hidden = false;
    if (step === "source") el.classList.add("field-error");
    const section = el.closest("section");
    if (section && section.hidden) section.hidden = false;
    el.scrollIntoView({ block: "nearest" });
  }

  function roleOf(field) { return Object.keys(state.roles).find((r) => state.roles[r] === field) || "none"; }

  // Cycle task → id → answer → none, skipping roles another column holds.
  function cycle(field) {
    const current = roleOf(field);
    if (current !== "none") delete state.roles[current];
    const order = [...ROLES, "none"];
    let index = order.indexOf(current);
    for (let step = 0; step < order.length; step++) {
      index = (index + 1) % order.length;
      const role = order[index];
      if (role === "none" || !state.roles[role]) {
        if (role !== "none") state.roles[role] = field;
        break;
      }
    }
  }

  function sample(value) {
    if (value === undefined || value === null) return "";
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return text.length > 60 ? text.slice(0, 59) + "…" : text;
  }

  // Re-rendering replaces the header buttons: the focused one (keyboard use: Enter/Space cycles
  // its role) gets focus back so the next key press cycles it again.
  function renderTable() {
    const head = $("preview-table").tHead;
    const body = $("preview-table").tBodies[0];
    const focused = head.contains(document.activeElement) ? document.activeElement.dataset.field : undefined;
    head.replaceChildren();
    body.replaceChildren();
    const tr = head.insertRow();
    const editable = ownMapping();
    for (const field of state.fields) {
      const th = document.createElement("th");
      th.scope = "col";
      const role = roleOf(field);
      th.className = "role-" + role;
      const first = state.rows.find((r) => r[field] !== undefined);
      const control = document.createElement(editable ? "button" : "div");
      control.className = "col-role";
      if (editable) {
        control.type = "button";
        control.dataset.field = field;
        control.setAttribute("aria-label", `Column ${field}: role ${role}. Press to change.`);
        control.addEventListener("click", () => { cycle(field); renderTable(); schedulePreview(); });
      }
      control.innerHTML = '<span class="col-name"></span><span class="role-chip"></span><span class="col-sample"></span>';
      control.querySelector(".col-name").textContent = field;
      control.querySelector(".role-chip").textContent = role;
      control.querySelector(".role-chip").classList.add("role-" + role);
      control.querySelector(".col-sample").textContent = first ? sample(first[field]) : "";
      th.appendChild(control);
      tr.appendChild(th);
    }
    if (focused !== undefined) {
      const again = [...head.querySelectorAll("button.col-role")].find((b) => b.dataset.field === focused);
      if (again) again.focus();
    }
    for (const row of state.rows.slice(0, 8)) {
      const r = body.insertRow();
      for (const field of state.fields) {
        const cell = r.insertCell();
        cell.className = "role-" + roleOf(field);
        cell.textContent = sample(row[field]);
      }
    }
    for (const select of document.querySelectorAll("[data-field-select]")) {
      const keep = select.value;
      select.replaceChildren(new Option("—", ""), ...state.fields.map((f) => new Option(f, f)));
      select.value = state.fields.includes(keep) ? keep : "";
    }
  }

  // The typed id, else the server's suggestion (the catalog entry's, or the file name without
  // extension and split words), else a placeholder.
  function datasetId() {
    const typed = $("dataset-id").value.trim();
    if (typed) return typed;
    if (state.kind === "catalog") return $("benchmark").value;
    if (state.kind === "recipe") return $("recipe").value;
    if (state.suggestedId) return state.suggestedId;
    if (state.kind === "hf") return (state.hf.dataset || "dataset").split("/").pop().replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "dataset";
    return "dataset";
  }

  // Answer extraction → mapping.answer_pattern: none (the whole cell), the text after a marker,
  // or the first group of a regular expression.
  const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  function answerPattern() {
    const how = document.querySelector('input[name="extract"]:checked').value;
    if (how === "marker" && $("extract-marker").value) return escapeRegex($("extract-marker").value) + "\\s*(.+?)\\s*$";
    if (how === "regex" && $("extract-regex").value) return $("extract-regex").value;
    return null;
  }

  const GRADERS = {
    numeric: { id: "numeric", config: { mode: "flexible-extract" } },
    exact: { id: "answer-match", config: { mode: "exact" } },
    normalized: { id: "answer-match", config: { mode: "normalized" } },
    contains: { id: "answer-match", config: { mode: "contains" } },
  };
  function chosenGraders() {
    return [...document.querySelectorAll('input[name="grader"]:checked')].map((box) => GRADERS[box.value]);
  }
  function showGraderGuess(guess) {
    const keys = guess.map((g) => g.id === "numeric" ? "numeric" : (g.config && g.config.mode) || "exact");
    $("grader-hint").textContent = keys.length ? `(suggested: ${keys.join(", ")})` : "";
    if (state.gradersTouched) return;
    for (const box of document.querySelectorAll('input[name="grader"]')) box.checked = keys.includes(box.value);
  }

  function mapping() {
    const m = { env: $("adv-env").value };
    if (state.roles.task) m.task_field = state.roles.task;
    if (state.roles.id) m.id_field = state.roles.id;
    if (state.roles.answer) {
      m.answer_field = state.roles.answer;
      const pattern = answerPattern();
      if (pattern) m.answer_pattern = pattern;
      const graders = chosenGraders();
      if (graders.length) m.extra_graders = graders;
    }
    const template = $("adv-template").value;
    if (template.trim()) m.task_template = template;
    if (!m.task_field && !m.task_template) m.task_template = " "; // placeholder until a task is chosen
    if ($("adv-git").value) m.git_field = $("adv-git").value;
    if ($("adv-ref").value) m.ref_field = $("adv-ref").value;
    if ($("adv-start-url").value.trim()) m.start_url = $("adv-start-url").value.trim();
    if ($("adv-image").value.trim()) m.image = $("adv-image").value.trim();
    const placement = {};
    if ($("adv-target").value.trim()) placement.target = $("adv-target").value.trim();
    if ($("adv-os").value) placement.os = $("adv-os").value;
    if (Object.keys(placement).length) m.placement = placement;
    return m;
  }

  // The id is sent only once chosen (typed, or the preview's suggestion when importing): the
  // preview then plans the version for the id it suggests.
  function request(forImport) {
    const id = datasetId();
    const req = {};
    if (forImport || $("dataset-id").value.trim() || !ownMapping()) req.id = id;
    if (state.kind === "catalog") req.benchmark = $("benchmark").value;
    else if (state.kind === "recipe") req.recipe = { id: $("recipe").value };
    else {
      req.spec = { id, version: "1.0.0", source: state.kind === "hf" ? hfSource() : { kind: "file" }, mapping: mapping() };
      const description = $("description").value.trim();
      if (description) req.spec.description = description;
    }
    if (forImport && state.existing.length) req.bump = document.querySelector('input[name="bump"]:checked').value;
    return { request: req, upload_id: state.kind === "hf" ? null : state.uploadId };
  }

  // The chosen Hugging Face source: a viewer config/split, or a raw file at the listed commit.
  function hfSource() {
    const source = { kind: "huggingface", dataset: state.hf.dataset };
    if (state.hf.files.length) {
      source.file = $("hf-file").value;
      if (state.hf.revision) source.revision = state.hf.revision;
    } else {
      const pick = state.hf.splits[Number($("hf-split").value)] || {};
      source.config = pick.config;
      source.split = pick.split;
    }
    if (state.hf.gated) source.gated = true;
    return source;
  }

  function showPreview(data) {
    state.fields = data.fields;
    state.rows = data.rows;
    state.guess = data.mapping_guess || {};
    if (!ownMapping() && data.mapping) {
      // a catalog entry or recipe maps the columns itself: the headers show its mapping
      state.roles = {};
      for (const r of ROLES) if (data.mapping[r + "_field"]) state.roles[r] = data.mapping[r + "_field"];
    }
    state.existing = data.existing_versions || [];
    state.plan = data.version_plan || null;
    state.planId = data.dataset_id || datasetId();
    if (ownMapping()) state.suggestedId = data.suggested_id || "";
    state.matches = state.kind === "upload" ? data.catalog_matches || [] : [];
    showMatch();
    showAnswerOptions(data);
    const noTask = ownMapping() && !state.roles.task && !$("adv-template").value.trim();
    const assertion = $("assertion");
    assertion.textContent = noTask ? "Choose the task column: click a column header until it says “task”." : data.assertion;
    const warnings = noTask ? [] : data.warnings;
    assertion.classList.toggle("warn", noTask || warnings.length > 0);
    $("warnings").replaceChildren(...warnings.map((w) => { const li = document.createElement("li"); li.textContent = w; return li; }));
    const tasks = noTask ? [] : (data.cases || []).slice(0, 3).map((c) => c.task);
    $("template-preview").replaceChildren(...tasks.map((t) => { const li = document.createElement("li"); const pre = document.createElement("pre"); pre.className = "wrap"; pre.textContent = t; li.appendChild(pre); return li; }));
    $("import-btn").disabled = noTask; // a blank task is not a case: choose one first
    $("version-pick").hidden = state.existing.length === 0;
    $("existing").textContent = state.existing.length ? `(existing: ${state.existing.join(", ")})` : "";
    renderPlan();
    const hint = ROLES.filter((r) => state.guess[r + "_field"]).map((r) => `${r} = ${state.guess[r + "_field"]}`);
    $("suggestion").hidden = !ownMapping() || hint.length === 0;
    $("suggestion").querySelector("span").textContent = "Suggested: " + hint.join(", ") + ".";
    $("map-step").hidden = false;
    $("import-step").hidden = false;
    $("dataset-id").placeholder = state.planId || datasetId();
    renderTable();
  }

  // A file that is a catalog entry's export: offer importing it as that entry.
  function showMatch() {
    const match = state.matches[0];
    $("recognized").hidden = !match;
    if (!match) return;
    $("match-what").textContent = state.fileName && state.fileName.startsWith("folder ") ? "These files are" : "This file is";
    $("match-id").textContent = match.benchmark;
    $("match-name").textContent = match.benchmark;
    $("match-columns").textContent = match.columns.join(", ");
    $("match-about").textContent = [match.description, match.assertion, match.graders.length && "Graders: " + match.graders.join(", ") + "."].filter(Boolean).join(" ");
  }

  function useMatch() {
    const match = state.matches[0];
    if (!match) return;
    state.kind = "catalog";
    state.keepUpload = true;
    state.roles = {};
    document.querySelector('input[name="source-kind"][value="catalog"]').checked = true;
    for (const panel of document.querySelectorAll("[data-panel]")) panel.hidden = panel.dataset.panel !== "catalog";
    $("benchmark").value = match.benchmark;
    onCatalogChange();
    $("recognized").hidden = true;
    preview();
  }

  // The answer step (extraction with a live sample, graders) for a chosen answer column; for a
  // catalog entry, a summary of what the entry applies.
  function showAnswerOptions(data) {
    const own = ownMapping();
    $("description-box").hidden = !own;
    $("answer-options").hidden = !own || !state.roles.answer;
    const first = data.cases && data.cases[0];
    $("extract-sample").textContent = first && "expected" in first ? JSON.stringify(first.expected) : "—";
    $("extract-marker").hidden = document.querySelector('input[name="extract"]:checked').value !== "marker";
    $("extract-regex").hidden = document.querySelector('input[name="extract"]:checked').value !== "regex";
    showGraderGuess(data.grader_guess || []);
    const summary = $("match-summary");
    summary.hidden = own;
    if (own) return;
    const m = data.mapping || {};
    const answer = m.answer_field && `Answer: ${m.answer_pattern ? `the part of \`${m.answer_field}\` matching ${m.answer_pattern}` : `\`${m.answer_field}\``}`;
    let parts;
    if (state.kind === "recipe") {
      const option = $("recipe").selectedOptions[0];
      parts = [answer, `Lineage: recipe ${option.value}@${option.dataset.latest}${option.dataset.shared === "yes" ? " (_shared)" : ""}`];
    } else {
      const entry = JSON.parse($("catalog-data").textContent)[$("benchmark").value] || {};
      parts = [
        answer,
        `Graders: ${(entry.graders || []).join(", ") || "none"}`,
        `Lineage: catalog ${$("benchmark").value}@${entry.version || "?"}${state.keepUpload && state.fileName ? `, read from your ${state.fileName}` : ""}`,
      ];
    }
    summary.textContent = parts.filter(Boolean).join(" · ");
  }

  // The version Import will register, from the chosen bump and the existing versions. Whether
  // the content equals the latest version is only known once the source is read: the result
  // then says "identical to …" and nothing is registered.
  function renderPlan() {
    const plan = state.plan;
    const id = state.planId;
    let text = "";
    const checked = plan && plan.checked;
    if (checked && checked.identical) {
      text = `Identical to ${id}@${checked.latest} — nothing to import.`;
    } else if (checked && state.existing.length) {
      const bump = document.querySelector('input[name="bump"]:checked').value;
      text = `Will register ${id}@${plan.bumps[bump]}.`;
    } else if (plan && state.existing.length && plan.latest) {
      const bump = document.querySelector('input[name="bump"]:checked').value;
      text = `Will register ${id}@${plan.bumps[bump]} — or nothing, if the content is identical to ${id}@${plan.latest}.`;
    } else if (plan) {
      text = `Will register ${id}@${plan.version}.`;
    }
    $("version-plan").textContent = text;
    // "nothing to import" never sits beside an enabled Import button
    if (checked && checked.identical) $("import-btn").disabled = true;
  }

  async function preview() {
    clearErrors();
    $("source-status").textContent = "Reading the first rows…";
    try {
      showPreview(await call("POST", "/import/preview", request(false)));
      $("source-status").textContent = "";
    } catch (error) {
      const step = $("map-step").hidden ? "source" : stepOf(error, "source");
      if (step !== "source") $("source-status").textContent = "";
      showError(step, error.message);
    }
  }

  function schedulePreview() {
    clearTimeout(state.timer);
    state.timer = setTimeout(preview, 250);
  }

  // One file, or several (a multiple selection, or a folder picked whole): several are the task
  // files of a folder benchmark, each sent under its path in the folder.
  async function uploadAndPreview(input) {
    const files = [...input.files];
    state.picked = input;
    clearErrors();
    if (files.length || !(state.kind === "catalog" && state.keepUpload)) { state.uploadId = null; state.keepUpload = false; }
    if (files.length) {
      $("source-status").textContent = files.length > 1 ? `Uploading ${files.length.toLocaleString()} files…` : `Uploading ${files[0].name}…`;
      // A folder picked whole is a folder even when it holds one file: its files go under their
      // paths with a "folder" field, so the server reads them as the folder, not as one file.
      const folder = input.id === "folder" || files.length > 1;
      const form = new FormData();
      if (folder) form.append("folder", "1");
      for (const file of files) form.append("file", file, folder ? file.webkitRelativePath || file.name : file.name);
      try {
        const saved = await call("POST", "/import/uploads", form, true);
        state.uploadId = saved.upload_id;
        state.fileName = saved.folder ? `folder ${saved.name} (${saved.files.toLocaleString()} file${saved.files === 1 ? "" : "s"})` : `file ${saved.name}`;
        state.suggestedId = "";
      } catch (error) {
        showError("source", error.message);
        return;
      }
    }
    if (state.kind === "upload" && !state.uploadId) { showError("source", "Choose a file first."); return; }
    await preview();
  }

  function showGatedWarning() {
    let show = false;
    if (state.kind === "catalog") show = Boolean((JSON.parse($("catalog-data").textContent)[$("benchmark").value] || {}).gated) && !hasToken();
    if (state.kind === "hf") show = state.hf.refused || (state.hf.gated && !hasToken());
    $("gated-warning").hidden = !show;
  }

  function onCatalogChange() {
    const option = $("benchmark").selectedOptions[0];
    const data = JSON.parse($("catalog-data").textContent)[option.value] || {};
    $("catalog-about").textContent = [data.description, data.license && "License: " + data.license].filter(Boolean).join(" · ");
    showGatedWarning();
  }

  async function searchHf(event) {
    event.preventDefault();
    const q = $("hf-q").value.trim();
    if (!q) return;
    $("source-status").textContent = `Searching Hugging Face for “${q}”…`;
    try {
      const hits = await call("GET", `/import/hf/search?q=${encodeURIComponent(q)}`);
      $("hf-results").replaceChildren(...hits.map((hit) => {
        const li = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.className = "hf-hit";
        button.dataset.dataset = hit.id;
        button.innerHTML = '<span class="hf-id"></span>';
        button.querySelector(".hf-id").textContent = hit.id;
        if (hit.gated) button.insertAdjacentHTML("beforeend", ' <span class="badge warn">gated</span>');
        if (hit.downloads != null) button.insertAdjacentHTML("beforeend", ` <span class="muted small">${Number(hit.downloads).toLocaleString()} downloads</span>`);
        button.addEventListener("click", () => openHf(hit));
        li.appendChild(button);
        return li;
      }));
      $("hf-results").hidden = false;
      $("source-status").textContent = hits.length ? `${hits.length} dataset${hits.length === 1 ? "" : "s"} found.` : `No dataset matches “${q}”.`;
    } catch (error) {
      $("source-status").textContent = error.message;
    }
  }

  // One dataset: its config/split pairs (or, without the viewer, its data files), then preview.
  async function openHf(hit) {
    Object.assign(state.hf, { dataset: hit.id, gated: Boolean(hit.gated), refused: false, splits: [], files: [], revision: null });
    state.roles = {};
    for (const b of document.querySelectorAll(".hf-hit")) b.setAttribute("aria-pressed", String(b.dataset.dataset === hit.id));
    $("hf-picked").hidden = false;
    $("hf-link").textContent = hit.id;
    $("hf-link").href = `https://huggingface.co/datasets/${hit.id}`;
    $("hf-gated-badge").hidden = !hit.gated;
    $("hf-split-box").hidden = true;
    $("hf-file-box").hidden = true;
    $("map-step").hidden = true;
    $("import-step").hidden = true;
    showGatedWarning();
    $("source-status").textContent = `Reading ${hit.id}…`;
    try {
      const found = await call("GET", `/import/hf/source?dataset=${encodeURIComponent(hit.id)}`);
      Object.assign(state.hf, { splits: found.splits, files: found.files, revision: found.revision || null });
    } catch (error) {
      state.hf.refused = error.details && error.details.secret === "HF_TOKEN";
      showGatedWarning();
      $("source-status").textContent = error.message;
      return;
    }
    $("hf-split").replaceChildren(...state.hf.splits.map((s, i) => new Option(`${s.config} / ${s.split}`, String(i))));
    $("hf-file").replaceChildren(...state.hf.files.map((f) => new Option(f.path + (f.size_bytes != null ? ` (${Number(f.size_bytes).toLocaleString()} bytes)` : ""), f.path)));
    $("hf-split-box").hidden = state.hf.splits.length === 0;
    $("hf-file-box").hidden = state.hf.files.length === 0;
    if (!state.hf.splits.length && !state.hf.files.length) { $("source-status").textContent = `${hit.id} has no split or data file to import.`; return; }
    await preview();
  }

  async function poll(jobId) {
    const job = await call("GET", `/import/jobs/${jobId}`);
    const bar = $("progress");
    const p = job.progress;
    // The share of the source read: bytes of a JSONL/CSV file, else rows of a known total.
    const fraction = p.fraction != null ? p.fraction : p.total ? Math.min(p.rows_read, p.total) / p.total : null;
    if (fraction != null) { bar.max = 100; bar.value = 100 * fraction; }
    const percent = fraction != null ? ` (${Math.floor(100 * fraction)}%)` : "";
    $("progress-text").textContent = `${job.state}: ${p.rows_read.toLocaleString()} rows read · ${p.cases_built.toLocaleString()} cases built` + (p.total ? ` of ${p.total.toLocaleString()}` : "") + percent;
    // How the source was read when not the plain way (e.g. the viewer failed mid-split and the
    // rest came from the Parquet export at the same commit).
    const notes = (job.result && job.result.notes) || p.notes || [];
    $("import-notes").replaceChildren(...notes.map((n) => { const li = document.createElement("li"); li.textContent = n; return li; }));
    $("import-notes").hidden = notes.length === 0;
    if (job.state === "queued" || job.state === "running") { setTimeout(() => poll(jobId), 250); return; }
    if (job.state !== "succeeded") {
      // A stopped bar: a value ends the indeterminate animation; the text says why.
      if (fraction == null) bar.value = 0;
      bar.dataset.failed = "true";
      const after = p.rows_read ? ` after ${p.rows_read.toLocaleString()} rows` : "";
      $("progress-text").textContent = `Import ${job.state}${after}; nothing was imported.`;
      showError("import", job.error ? job.error.message : job.state);
      $("import-btn").disabled = false;
      return;
    }
    bar.max = 100; bar.value = 100;
    bar.dataset.done = "true";
    const r = job.result;
    $("progress-text").textContent = r.identical_to
      ? `Unchanged: identical to ${r.id}@${r.identical_to} (${r.cases.toLocaleString()} cases) — nothing to import; no new version registered.`
      : `Imported ${r.cases.toLocaleString()} cases as ${r.id}@${r.version}${r.created ? "" : " (unchanged)"}.`;
    setTimeout(() => { window.location.href = `/datasets/${encodeURIComponent(r.id)}?v=${encodeURIComponent(r.version)}`; }, 700);
  }

  async function startImport() {
    clearErrors();
    $("import-btn").disabled = true;
    $("progress-box").hidden = false;
    $("progress").removeAttribute("value");
    delete $("progress").dataset.failed;
    $("progress-text").textContent = "";
    try {
      const started = await call("POST", "/import/jobs", request(true));
      await poll(started.job_id);
    } catch (error) {
      $("progress").value = 0;
      $("progress").dataset.failed = "true";
      showError(stepOf(error, "import"), error.message);
      $("import-btn").disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const radio of document.querySelectorAll('input[name="source-kind"]')) {
      radio.addEventListener("change", () => {
        state.kind = radio.value;
        for (const panel of document.querySelectorAll("[data-panel]")) panel.hidden = panel.dataset.panel !== state.kind;
        state.uploadId = null; state.roles = {}; state.keepUpload = false; state.suggestedId = ""; state.matches = [];
        clearErrors(); $("recognized").hidden = true; $("match-summary").hidden = true;
        $("map-step").hidden = true; $("import-step").hidden = true; $("source-status").textContent = "";
        showGatedWarning();
      });
    }
    state.kind = document.querySelector('input[name="source-kind"]:checked').value;
    $("benchmark").addEventListener("change", () => { state.keepUpload = false; onCatalogChange(); });
    onCatalogChange();
    $("preview-btn").addEventListener("click", () => {
      const input = state.kind === "upload" && state.picked && state.picked.id === "folder" && state.picked.files.length ? state.picked : $({ upload: "file", catalog: "catalog-file", recipe: "recipe-file" }[state.kind]);
      if (state.kind !== "hf") { uploadAndPreview(input); return; }
      if (state.hf.splits.length || state.hf.files.length) preview();
      else $("source-status").textContent = "Search Hugging Face and choose a dataset first.";
    });
    $("hf-search").addEventListener("submit", searchHf);
    for (const id of ["hf-split", "hf-file"]) $(id).addEventListener("change", () => { state.roles = {}; preview(); });
    for (const id of ["file", "folder"]) $(id).addEventListener("change", () => uploadAndPreview($(id)));
    $("use-match").addEventListener("click", useMatch);
    for (const radio of document.querySelectorAll('input[name="extract"]')) radio.addEventListener("change", schedulePreview);
    for (const id of ["extract-marker", "extract-regex"]) $(id).addEventListener("input", schedulePreview);
    for (const box of document.querySelectorAll('input[name="grader"]')) box.addEventListener("change", () => { state.gradersTouched = true; schedulePreview(); });
    $("use-suggestion").addEventListener("click", () => {
      state.roles = {};
      for (const r of ROLES) if (state.guess[r + "_field"]) state.roles[r] = state.guess[r + "_field"];
      renderTable(); schedulePreview();
    });
    $("description").addEventListener("input", schedulePreview);
    for (const id of ["adv-env", "adv-git", "adv-ref", "adv-start-url", "adv-template", "adv-image", "adv-target", "adv-os", "dataset-id"]) {
      $(id).addEventListener("input", schedulePreview);
    }
    for (const radio of document.querySelectorAll('input[name="bump"]')) radio.addEventListener("change", renderPlan);
    $("import-btn").addEventListener("click", startImport);
  });
})();
