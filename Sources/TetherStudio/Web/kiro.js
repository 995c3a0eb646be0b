// The Kiro screen: the four E-ink pages as the device shows them, the day being pushed, and
// the event log with focus sessions and focus time.
"use strict";

studio.screens.kiro = (() => {
  const D = "kiro";
  const ui = {};
  const duration = (seconds) => {
    const s = Math.round(seconds);
    return Math.floor(s / 3600) > 0 ? Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min"
      : Math.floor(s / 60) > 0 ? Math.floor(s / 60) + " min " + (s % 60) + " s" : s + " s";
  };

  function build(section) {
    ui.dot = el("span", { className: "dot", id: "kiro-dot" });
    ui.phase = el("span", { id: "kiro-phase" }, "—");
    ui.error = el("p", { className: "error", id: "kiro-error", role: "alert", hidden: true });
    section.append(el("div", { className: "toolbar" }, el("h2", {}, "Kiro"), ui.dot, ui.phase,
      el("button", { type: "button", id: "kiro-connect", onclick: () => act(D, "connect") }, "Connect"),
      el("button", { type: "button", id: "kiro-disconnect", onclick: () => act(D, "disconnect") }, "Disconnect"),
      el("button", { type: "button", id: "kiro-sync", onclick: () => act(D, "sync") }, "Sync"),
      el("span", { className: "muted", id: "kiro-battery" })), ui.error);
    ui.pages = el("div", { className: "panels", id: "kiro-pages" });
    const buttons = [["select", "Next task"], ["wheel", "Wheel"], ["enter", "Enter task"], ["complete", "Complete"], ["skip", "Skip"],
      ["sleep", "Sleep"], ["wake", "Wake"], ["lowBattery", "Low battery"], ["refresh", "Ask for refresh"]];
    ui.simulator = el("div", { className: "row", id: "kiro-simulator", hidden: true }, el("span", { className: "muted" }, "Simulator — the device's buttons:"),
      ...buttons.map(([button, label]) => el("button", { type: "button", id: "kiro-sim-" + button, onclick: () => act(D, "simulate", { button: button }) }, label)));
    const panel = el("div", { className: "card wide" }, el("h3", {}, "E-ink pages ", el("span", { className: "muted", id: "kiro-shown" })), ui.pages, ui.simulator);
    ui.day = el("textarea", { id: "kiro-day", rows: 18, spellcheck: false, className: "mono" });
    const day = el("div", { className: "card" }, el("h3", {}, "The day pushed"),
      ui.day,
      el("div", { className: "row" },
        el("button", { type: "button", id: "kiro-push", onclick: () => {
          // Until the server answers, the edit stays (a refused day is corrected, not lost).
          ui.pushFrom = ui.state.day;
          ui.errorBeforePush = ui.state.dayError;
          act(D, "push", { day: ui.day.value });
        } }, "Push"),
        el("button", { type: "button", id: "kiro-revert", onclick: () => { ui.day.value = ui.state.day; ui.dayEdited = false; } }, "Revert")),
      el("p", { className: "error", id: "kiro-day-error", hidden: true }),
      el("p", { className: "error", id: "kiro-sync-error", hidden: true }));
    ui.day.addEventListener("input", () => { ui.dayEdited = true; });
    ui.log = el("div", { className: "log", id: "kiro-log" });
    ui.focus = el("tbody", { id: "kiro-focus" });
    const log = el("div", { className: "card" },
      el("h3", {}, "Focus time ", el("span", { id: "kiro-focus-time" }, "0 s")),
      el("p", { className: "muted", id: "kiro-session-time" }),
      el("table", { className: "list" }, el("thead", {}, el("tr", {}, ...["Task", "Start", "Outcome", "Time"].map((t) => el("th", {}, t)))), ui.focus),
      el("h3", {}, "Events ", el("button", { type: "button", id: "kiro-clear-log", onclick: () => act(D, "clearLog") }, "Clear")), ui.log);
    section.append(el("div", { className: "grid" }, panel, day, log));
  }

  function render(s) {
    ui.state = s;
    ui.dot.className = "dot " + s.dot + (s.dot === "yellow" ? " spinning" : "");
    ui.phase.textContent = s.connecting && s.phase === "idle" ? "looking for the Kiro…" : s.phase;
    $("kiro-connect").hidden = s.phase !== "idle";
    $("kiro-disconnect").hidden = s.phase === "idle";
    $("kiro-battery").textContent = s.lowBattery === undefined ? "" : "battery low: " + s.lowBattery + "%";
    ui.error.hidden = !s.error;
    ui.error.textContent = s.error || "";
    drawIfChanged(ui.pages, [s.pages, s.shownPage], () => ui.pages.replaceChildren(...s.pages.map((page) =>
      el("figure", { className: "eink" + (page.name === s.shownPage ? " shown" : ""), "data-page": page.name },
        el("figcaption", {}, page.title + (page.name === s.shownPage ? " — on the panel" : "")),
        el("pre", {}, page.lines.join("\n")),
        el("a", { href: "export/kiro/page-" + page.name + ".svg", download: "" }, "SVG")))));
    $("kiro-shown").textContent = s.simulated ? (s.shownPage ? "" : "(the panel sleeps)") : "(drawn from the day pushed)";
    ui.simulator.hidden = !s.simulated;
    if (ui.pushFrom !== undefined) {
      if (s.day !== ui.pushFrom) { ui.dayEdited = false; ui.pushFrom = undefined; }
      else if (s.dayError && s.dayError !== ui.errorBeforePush) ui.pushFrom = undefined;
    }
    // The day follows the app's (the device completes tasks in it) unless the user is editing it.
    if (!ui.dayEdited && document.activeElement !== ui.day) ui.day.value = s.day;
    for (const [id, text] of [["kiro-day-error", s.dayError], ["kiro-sync-error", s.syncError || s.sendFailure]]) {
      $(id).hidden = !text;
      $(id).textContent = text || "";
    }
    $("kiro-focus-time").textContent = duration(s.focusSeconds);
    $("kiro-session-time").textContent = "Focus time counts periods of 30 min or more (§9); all sessions together: " + duration(s.sessionSeconds) + ".";
    drawIfChanged(ui.focus, s.focusSessions, () => ui.focus.replaceChildren(...s.focusSessions.map((f) => el("tr", {},
      el("td", {}, f.title ?? f.taskId), el("td", {}, new Date(f.start).toLocaleTimeString()), el("td", {}, f.outcome),
      el("td", {}, f.seconds === undefined ? "—" : duration(f.seconds))))));
    drawIfChanged(ui.log, s.log.length ? [s.log[0].id, s.log.length] : [], () => ui.log.replaceChildren(...s.log.map((entry) =>
      el("div", {}, new Date(entry.time).toLocaleTimeString() + " " + entry.text))));
  }

  return { build, render };
})();
