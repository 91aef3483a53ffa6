// Boris live view: follows /watch/events (Server-Sent Events) and renders sessions,
// tool calls, streamed output, background tasks and edits. No dependencies.
"use strict";
(function () {
  const MAX_CALLS = 2000;      // call cards kept on the page
  const MAX_OUT = 64 * 1024;   // characters of output kept per call or task (the tail)
  const $ = (id) => document.getElementById(id);
  const callsEl = $("calls"), sessionsEl = $("sessions"), tasksEl = $("tasks");
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
    head.appendChild(el("span", "sess", sessionLabel(e.session)));
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
      calls.delete(Number(old.id.slice(5)));
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
      case "dropped":
        callsEl.appendChild(el("div", "notice", "[" + e.count + " older events were dropped: the history is bounded]"));
        break;
    }
    countEl.textContent = seen + " events";
    if (follow && !paused) window.scrollTo(0, document.body.scrollHeight);
  }

  filterEl.addEventListener("change", () => {
    for (const c of document.querySelectorAll(".call, .task")) c.classList.toggle("hidden", !shown(c.dataset.session));
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
