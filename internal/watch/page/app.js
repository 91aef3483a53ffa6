// Boris live view: follows /watch/events (Server-Sent Events) and renders sessions,
// tool calls, streamed output, background tasks and edits. No dependencies.
"use strict";
(function () {
  const MAX_CALLS = 2000;      // call cards kept on the page
  const MAX_OUT = 64 * 1024;   // characters of output kept per call or task (the tail)
  const $ = (id) => document.getElementById(id);
  const callsEl = $("calls"), sessionsEl = $("sessions"), tasksEl = $("tasks"), indexesEl = $("indexes");
  const filterEl = $("filter"), pauseEl = $("pause"), connEl = $("conn"), countEl = $("count");
  const sessions = new Map(), calls = new Map(), tasks = new Map();
  let paused = false, queue = [], seen = 0;
  // eslint-disable-next-line no-control-regex
  const ansi = /\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-_]/g;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function clock(t) { return new Date(t).toLocaleTimeString(); }
  function dur(ms) { return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : (ms || 0) + " ms"; }
  function sessionLabel(id) {
    const s = sessions.get(id);
    const short = (id || "").slice(0, 8);
    return s && s.client ? s.client + " " + short : short;
  }
  function atBottom() { return window.innerHeight + window.scrollY >= document.body.scrollHeight - 40; }
  function shown(session) { return !filterEl.value || filterEl.value === session; }

  function stopButton(key) {
    const b = el("button", "stop", "Stop");
    b.type = "button";
    b.dataset.stop = key;
    b.title = "Stop this command; the agent is told the user stopped it";
    b.addEventListener("click", () => {
      b.disabled = true;
      b.textContent = "stopping…";
      fetch("/watch/stop", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ stop: key }),
      }).then((r) => { if (!r.ok) b.textContent = "already ended"; })
        .catch(() => { b.textContent = "failed"; b.disabled = false; });
    });
    return b;
  }

  // post sends body to a POST action of the view, and resolves to its JSON answer, or
  // rejects with the server's message.
  function post(path, body) {
    return fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.ok ? r.json() : r.text().then((t) => { throw new Error(t.trim() || r.status + " " + r.statusText); }));
  }

  // checkpointLine shows the checkpoint a call made and, where the server offers it, a
  // "Rewind to here" button: a dry run first, the rewind only once confirmed.
  function checkpointLine(e) {
    const div = el("div", "checkpoint");
    div.appendChild(el("span", "mono cpid", e.checkpoint));
    div.appendChild(el("span", "dim", e.files ? " · " + e.files + (e.files === 1 ? " file" : " files") + " changed" : ""));
    if (document.body.dataset.rewind === "on") {
      const b = el("button", "rewind", "Rewind to here");
      b.type = "button";
      b.title = "Show what putting the files back as they were just before this call would change; nothing changes until you confirm";
      b.addEventListener("click", () => dryRun(div, b, e.checkpoint));
      div.appendChild(b);
    }
    return div;
  }

  function dryRun(host, button, id) {
    let panel = host.querySelector(".rewind-panel");
    if (panel) panel.remove();
    panel = el("div", "rewind-panel");
    panel.appendChild(el("div", "dim", "Asking what rewinding to " + id + " would change…"));
    host.appendChild(panel);
    button.disabled = true;
    post("/watch/rewind", { to: id, dry_run: true }).then((res) => {
      button.disabled = false;
      panel.textContent = "";
      if (res.actions.length === 0) {
        panel.appendChild(el("div", "", "Nothing to rewind: the files already are as they were before " + res.to + "."));
        panel.appendChild(closeButton(panel));
        return;
      }
      panel.appendChild(el("div", "", "Rewinding to " + res.to + " would put back, as they were just before this call:"));
      panel.appendChild(actionList(res.actions, false));
      const conflicts = res.actions.filter((a) => a.conflict).length;
      let force = null;
      if (conflicts) {
        const label = el("label", "force");
        force = el("input");
        force.type = "checkbox";
        label.appendChild(force);
        label.appendChild(document.createTextNode(" force: overwrite " + (conflicts === 1 ? "the file" : "the " + conflicts + " files") + " changed outside Boris's calls"));
        panel.appendChild(label);
      }
      const go = el("button", "confirm", "Rewind");
      go.type = "button";
      go.addEventListener("click", () => {
        go.disabled = true;
        go.textContent = "rewinding…";
        post("/watch/rewind", { to: res.to, dry_run: false, force: !!(force && force.checked) }).then((done) => {
          panel.textContent = "";
          panel.classList.add("done");
          panel.appendChild(el("div", "", "Rewound to " + done.to + "."));
          panel.appendChild(actionList(done.actions, true));
          for (const f of done.failed || []) panel.appendChild(el("div", "error", "failed: " + f));
          if (done.rescue) panel.appendChild(el("div", "rescue", "The rewind is checkpoint " + done.rescue + ": rewind to it to undo the rewind."));
          panel.appendChild(closeButton(panel));
        }).catch((err) => {
          go.disabled = false;
          go.textContent = "Rewind";
          showError(panel, err);
        });
      });
      panel.appendChild(go);
      panel.appendChild(closeButton(panel, "Cancel"));
    }).catch((err) => {
      button.disabled = false;
      panel.textContent = "";
      showError(panel, err);
      panel.appendChild(closeButton(panel));
    });
  }

  function actionList(actions, done) {
    const ul = el("ul", "actions mono");
    for (const a of actions) {
      const li = el("li", a.conflict ? "conflict" : a.lost ? "lost" : "", a.do + " " + a.path);
      if (a.lost) li.appendChild(el("span", "why", " (not restorable: " + a.lost + ")"));
      else if (a.conflict) li.appendChild(el("span", "why", done ? " (overwritten: " + a.conflict + ")" : " (refused without force: " + a.conflict + ")"));
      ul.appendChild(li);
    }
    return ul;
  }

  function showError(panel, err) {
    const old = panel.querySelector(".error");
    if (old) old.remove();
    panel.insertBefore(el("div", "error", err.message), panel.firstChild);
  }

  function closeButton(panel, text) {
    const b = el("button", "close", text || "Close");
    b.type = "button";
    b.addEventListener("click", () => panel.remove());
    return b;
  }

  function appendOutput(pre, stream, text) {
    text = text.replace(ansi, "");
    const last = pre.lastChild;
    if (last && last.dataset && last.dataset.stream === stream) {
      last.textContent += text;
    } else {
      const span = el("span", stream, text);
      span.dataset.stream = stream;
      pre.appendChild(span);
    }
    let total = pre.textContent.length;
    while (total > MAX_OUT && pre.firstChild) {
      const first = pre.firstChild;
      const over = total - MAX_OUT;
      if (first.classList.contains("gap")) { pre.removeChild(first); total = pre.textContent.length; continue; }
      if (first.textContent.length <= over) { total -= first.textContent.length; pre.removeChild(first); }
      else { first.textContent = first.textContent.slice(over); total -= over; }
      if (!pre.firstChild || !pre.firstChild.classList.contains("gap")) pre.insertBefore(el("span", "gap", "[… earlier output dropped …]\n"), pre.firstChild);
      total = pre.textContent.length;
      if (total <= MAX_OUT + 40) break;
    }
    pre.scrollTop = pre.scrollHeight;
  }

  function renderDiff(text) {
    const pre = el("pre", "diff");
    for (const line of text.split("\n")) {
      if (line === "") continue;
      let cls = "";
      if (line.startsWith("---") || line.startsWith("+++") || line.startsWith("@@")) cls = "meta";
      else if (line[0] === "+") cls = "add";
      else if (line[0] === "-") cls = "del";
      pre.appendChild(el("span", cls, line + "\n"));
    }
    return pre;
  }

  function renderSessions() {
    sessionsEl.textContent = "";
    if (sessions.size === 0) sessionsEl.appendChild(el("li", "dim", "none yet"));
    for (const [id, s] of sessions) {
      const li = el("li", s.ended ? "ended" : "");
      li.dataset.session = id;
      li.appendChild(el("div", "", (s.client || "client") + (s.version ? " " + s.version : "")));
      li.appendChild(el("div", "dim mono", id));
      li.appendChild(el("div", "dim", (s.transport || "") + " · since " + clock(s.time) + (s.ended ? " · closed" : "")));
      if (s.cwd) li.appendChild(el("div", "mono cwd", s.cwd));
      sessionsEl.appendChild(li);
    }
    const cur = filterEl.value;
    filterEl.textContent = "";
    filterEl.appendChild(el("option", "", "all sessions")).value = "";
    for (const id of sessions.keys()) {
      const o = el("option", "", sessionLabel(id));
      o.value = id;
      filterEl.appendChild(o);
    }
    filterEl.value = cur;
  }

  function newCall(e) {
    const card = el("article", "call running");
    card.id = "call-" + e.call;
    card.dataset.session = e.session || "";
    card.dataset.tool = e.tool;
    const head = el("div", "head");
    head.appendChild(el("span", "time", clock(e.time)));
    head.appendChild(el("span", "sess", e.session ? sessionLabel(e.session) : e.client || ""));
    head.appendChild(el("span", "tool", e.tool));
    head.appendChild(el("span", "args", e.args || ""));
    head.appendChild(el("span", "outcome", "running"));
    head.appendChild(el("span", "dur", ""));
    if (e.stop) head.appendChild(stopButton(e.stop));
    card.appendChild(head);
    card.appendChild(el("pre", "out"));
    if (!shown(card.dataset.session)) card.classList.add("hidden");
    callsEl.appendChild(card);
    calls.set(e.call, card);
    while (callsEl.children.length > MAX_CALLS) {
      const old = callsEl.firstElementChild;
      if (old.id) calls.delete(Number(old.id.slice(5)));
      old.remove();
    }
  }

  function endCall(e) {
    const card = calls.get(e.call);
    if (!card) return;
    card.classList.remove("running");
    card.classList.add(e.error || /timed out|stopped|killed/.test(e.outcome || "") || /^exit [1-9]/.test(e.outcome || "") ? "bad" : "ok");
    card.querySelector(".outcome").textContent = e.outcome || "ok";
    card.querySelector(".dur").textContent = dur(e.duration_ms);
    const b = card.querySelector("button.stop");
    if (b) b.remove();
    if (e.summary) card.appendChild(el("div", "summary", e.summary));
    if (e.diff) card.appendChild(renderDiff(e.diff));
    if (e.checkpoint) card.appendChild(checkpointLine(e));
    if (e.cwd && sessions.has(e.session)) { sessions.get(e.session).cwd = e.cwd; renderSessions(); }
  }

  function newTask(e) {
    const none = tasksEl.querySelector(".none");
    if (none) none.remove();
    const li = el("li", "task running");
    li.dataset.session = e.session || "";
    li.dataset.task = e.task;
    const head = el("div", "head");
    head.appendChild(el("span", "mono", e.task + " "));
    head.appendChild(el("span", "status outcome", "running"));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(stopButton(e.stop));
    li.appendChild(head);
    li.appendChild(el("div", "mono args", e.args || ""));
    li.appendChild(el("div", "dim", sessionLabel(e.session) + " · since " + clock(e.time)));
    li.appendChild(el("pre", "out"));
    if (!shown(li.dataset.session)) li.classList.add("hidden");
    tasksEl.appendChild(li);
    tasks.set(e.session + "/" + e.task, li);
  }

  function endTask(e) {
    const li = tasks.get(e.session + "/" + e.task);
    if (!li) return;
    li.classList.remove("running");
    li.querySelector(".status").textContent = e.outcome + " after " + dur(e.duration_ms);
    const b = li.querySelector("button.stop");
    if (b) b.remove();
  }

  function apply(e) {
    seen++;
    const follow = atBottom();
    switch (e.kind) {
      case "session":
        sessions.set(e.session, Object.assign(sessions.get(e.session) || {}, e, { ended: false }));
        renderSessions();
        break;
      case "session_end":
        if (sessions.has(e.session)) { sessions.get(e.session).ended = true; renderSessions(); }
        break;
      case "call": if (!calls.has(e.call)) newCall(e); break;
      case "call_end": endCall(e); break;
      case "task": if (!tasks.has(e.session + "/" + e.task)) newTask(e); break;
      case "task_end": endTask(e); break;
      case "output": {
        const host = e.task ? tasks.get(e.session + "/" + e.task) : calls.get(e.call);
        if (host) appendOutput(host.querySelector("pre.out"), e.stream, e.text || "");
        break;
      }
      case "checkpoint": {
        // Changes made between calls, found as this call started: shown before it.
        const div = el("div", "between");
        div.dataset.session = e.session || "";
        div.appendChild(el("span", "time", clock(e.time)));
        div.appendChild(el("span", "dim", " changes made between calls (a background task, an editor) "));
        div.appendChild(checkpointLine(e));
        if (!shown(div.dataset.session)) div.classList.add("hidden");
        const card = calls.get(e.call);
        if (card) callsEl.insertBefore(div, card); else callsEl.appendChild(div);
        break;
      }
      case "index": {
        // A search index is ready: one line a tree, the latest replacing the one before.
        const none = indexesEl.querySelector(".none");
        if (none) none.remove();
        for (const li of indexesEl.querySelectorAll("li")) if (li.dataset.root === e.cwd) li.remove();
        const li = el("li", "index", e.summary || "");
        li.dataset.root = e.cwd || "";
        indexesEl.appendChild(li);
        break;
      }
      case "dropped":
        callsEl.appendChild(el("div", "notice", "[" + e.count + " older events were dropped: the history is bounded]"));
        break;
    }
    countEl.textContent = seen + " events";
    if (follow && !paused) window.scrollTo(0, document.body.scrollHeight);
  }

  filterEl.addEventListener("change", () => {
    for (const c of document.querySelectorAll(".call, .task, .between")) c.classList.toggle("hidden", !shown(c.dataset.session));
  });
  pauseEl.addEventListener("click", () => {
    paused = !paused;
    if (!paused) { const q = queue; queue = []; q.forEach(apply); }
    pauseEl.textContent = paused ? "Resume" : "Pause";
  });

  const es = new EventSource("/watch/events");
  es.onopen = () => { connEl.textContent = "live"; connEl.classList.add("live"); };
  es.onerror = () => { connEl.textContent = "reconnecting…"; connEl.classList.remove("live"); };
  es.onmessage = (m) => {
    let e;
    try { e = JSON.parse(m.data); } catch (_) { return; }
    if (paused) { queue.push(e); if (queue.length > 20000) queue.shift(); pauseEl.textContent = "Resume (" + queue.length + ")"; return; }
    apply(e);
  };
})();
