// The Tybe screen: the mobile spec's §2 — header, status bar, keyboard and compose modes, log.
"use strict";

studio.screens.tybe = (() => {
  const D = "tybe";
  const ui = {};
  const modifiersOnly = ["Shift", "Control", "Alt", "Meta", "AltGraph", "OS", "Hyper", "Super", "Fn", "FnLock", "NumLock", "ScrollLock"];

  function keyEvent(e) {
    // An input method is composing (Korean): its result arrives with compositionend.
    if (e.isComposing || e.key === "Process" || e.keyCode === 229) return;
    if (modifiersOnly.includes(e.key) || e.key === "Dead" || e.key === "Unidentified") return;
    e.preventDefault();
    // A held key repeats; §5: a tap is one key (hold-to-repeat is not implemented).
    if (e.repeat) return;
    let key = e.key;
    // A shortcut names its key by position: on a Mac, Option+letter arrives as "å", "∫"…
    const code = /^Key([A-Z])$|^Digit([0-9])$/.exec(e.code || "");
    if (code && (e.altKey || e.ctrlKey || e.metaKey)) key = (code[1] || code[2]).toLowerCase();
    act(D, "key", { key: key, ctrl: e.ctrlKey, alt: e.altKey, shift: e.shiftKey, meta: e.metaKey });
  }

  // Text (an input method's commit, a paste) in actions of at most 256 characters.
  function sendText(text) {
    const characters = Array.from(text);
    for (let i = 0; i < characters.length; i += 256) act(D, "text", { text: characters.slice(i, i + 256).join("") });
  }

  function build(section) {
    ui.keyboard = el("input", { type: "radio", name: "tybe-mode", id: "tybe-mode-keyboard", onchange: () => act(D, "mode", { mode: "keyboard" }) });
    ui.compose = el("input", { type: "radio", name: "tybe-mode", id: "tybe-mode-compose", onchange: () => act(D, "mode", { mode: "compose" }) });
    ui.bridgeName = el("input", { type: "text", id: "tybe-bridge-name", maxLength: 64, size: 18, title: "the bridge's advertised name (kept)" });
    const saveName = () => { if (ui.bridgeName.value.trim() !== ui.state.bridgeName) act(D, "bridgeName", { name: ui.bridgeName.value }); };
    ui.bridgeName.addEventListener("change", saveName);
    ui.showLog = el("input", { type: "checkbox", id: "tybe-show-log", onchange: () => act(D, "showLog", { on: ui.showLog.checked }) });
    section.append(el("div", { className: "toolbar" },
      el("h2", {}, "Tybe"),
      el("span", { className: "segmented" }, el("label", {}, ui.keyboard, " Keyboard"), el("label", {}, ui.compose, " Compose")),
      el("label", { for: "tybe-bridge-name" }, "Bridge"), ui.bridgeName,
      el("button", { type: "button", id: "tybe-connect", onclick: () => act(D, "connect") }, "Connect"),
      el("button", { type: "button", id: "tybe-reset", onclick: () => act(D, "reset") }, "Reset"),
      el("label", {}, ui.showLog, " Show log")));
    ui.status = el("div", { className: "row", id: "tybe-status" },
      el("span", { id: "tybe-link", className: "pill grey" }), el("span", { id: "tybe-bridge", className: "pill grey" }),
      el("span", { id: "tybe-dongle", className: "pill grey" }),
      el("span", { className: "muted" }, "keys ", el("b", { id: "tybe-keys" }, "0"), " · frames ", el("b", { id: "tybe-frames" }, "0"),
        " · errors ", el("b", { id: "tybe-errors" }, "0")));
    section.append(ui.status);

    ui.capture = el("textarea", { id: "tybe-capture", rows: 2, placeholder: "Click here and type: each key press is sent as it happens", autocomplete: "off", spellcheck: false });
    ui.capture.addEventListener("keydown", keyEvent);
    let composing = false;
    ui.capture.addEventListener("compositionstart", () => { composing = true; });
    ui.capture.addEventListener("compositionend", (e) => {
      composing = false;
      if (e.data) sendText(e.data);
      // Cleared once the input method is done with the field: the next syllable's
      // composition may begin at once, and clearing now would wipe it.
      setTimeout(() => { if (!composing) ui.capture.value = ""; }, 0);
    });
    // A paste (or a soft keyboard that sends no key events): its text, one frame per character.
    ui.capture.addEventListener("input", (e) => {
      if (e.isComposing || composing || e.inputType === "insertFromComposition" || e.inputType === "insertCompositionText") return;
      const text = ui.capture.value;
      ui.capture.value = "";
      if (text) sendText(text);
    });
    const toolbar = [["Tab", "⇥ Tab"], ["Escape", "esc"], ["ArrowLeft", "←"], ["ArrowUp", "↑"], ["ArrowDown", "↓"], ["ArrowRight", "→"], ["Backspace", "⌫"], ["Enter", "↩"]];
    ui.keyboardPane = el("div", { className: "card wide", id: "tybe-keyboard" },
      el("div", { className: "row" },
        el("div", { className: "glyph", id: "tybe-last-key", title: "the last key sent" }, "—"),
        el("div", { className: "chips", id: "tybe-recent", "aria-label": "recent keys" })),
      ui.capture,
      el("div", { className: "row" }, ...toolbar.map(([key, label]) =>
        el("button", { type: "button", className: "tybe-toolbar", "data-key": key, onclick: () => { act(D, "key", { key: key }); ui.capture.focus(); } }, label)),
        el("span", { className: "muted" }, "Hold-to-repeat is not implemented yet: a tap is one key.")));
    ui.composeText = el("textarea", { id: "tybe-compose-text", rows: 6, placeholder: "Text to type on the host (Korean and ASCII)" });
    ui.composePane = el("div", { className: "card wide", id: "tybe-compose", hidden: true },
      ui.composeText,
      el("div", { className: "row" },
        el("button", { type: "button", id: "tybe-send", onclick: () => act(D, "compose", { text: ui.composeText.value }) }, "Send"),
        el("span", { id: "tybe-progress", className: "muted" })));
    ui.log = el("div", { className: "log", id: "tybe-log" });
    ui.logPane = el("div", { className: "card wide", id: "tybe-log-pane" },
      el("h3", {}, "Log ", el("button", { type: "button", id: "tybe-clear-log", onclick: () => act(D, "clearLog") }, "Clear")), ui.log);
    ui.settings = el("div", { className: "card" }, el("h3", {}, "Settings"),
      el("label", { className: "check" }, el("input", { type: "checkbox", id: "tybe-show-log-default", onchange: (e) => act(D, "settings", { showLogByDefault: e.target.checked }) }), " Show the log by default"),
      el("label", { className: "check" }, el("input", { type: "checkbox", id: "tybe-reset-foreground", onchange: (e) => act(D, "settings", { resetBLEOnForeground: e.target.checked }) }), " Reset BLE when this page comes back into view"));
    ui.hostSource = el("select", { id: "tybe-host-source", onchange: () => act(D, "hostInputSource", { source: ui.hostSource.value }) },
      el("option", { value: "english" }, "English"), el("option", { value: "korean" }, "Korean (2-set)"));
    ui.host = el("div", { className: "card", id: "tybe-host-card", hidden: true }, el("h3", {}, "Simulator: what the host typed"),
      el("div", { className: "row" }, el("label", { for: "tybe-host-source" }, "Input source"), ui.hostSource,
        el("button", { type: "button", id: "tybe-host-clear", onclick: () => act(D, "hostClear") }, "Clear"),
        el("span", { className: "muted", id: "tybe-host-keys" })),
      el("pre", { className: "host-text", id: "tybe-host-text" }));
    section.append(el("div", { className: "grid" }, ui.keyboardPane, ui.composePane, ui.host, ui.settings, ui.logPane));
    document.addEventListener("visibilitychange", () => { if (!document.hidden && ui.state && ui.state.resetBLEOnForeground) act(D, "foreground"); });
  }

  function pill(id, p) { const element = $(id); element.textContent = p.text; element.className = "pill " + p.colour; }

  function render(s) {
    ui.state = s;
    ui.keyboard.checked = s.mode === "keyboard";
    ui.compose.checked = s.mode === "compose";
    if (document.activeElement !== ui.bridgeName) ui.bridgeName.value = s.bridgeName;
    ui.showLog.checked = s.showLog;
    pill("tybe-link", s.link);
    pill("tybe-bridge", s.bridge);
    pill("tybe-dongle", s.dongle);
    $("tybe-keys").textContent = String(s.keys);
    $("tybe-frames").textContent = String(s.frames);
    $("tybe-errors").textContent = String(s.errors);
    $("tybe-errors").classList.toggle("error", s.errors > 0);
    ui.keyboardPane.hidden = s.mode !== "keyboard";
    ui.composePane.hidden = s.mode !== "compose";
    $("tybe-last-key").textContent = s.lastKey ?? "—";
    drawIfChanged($("tybe-recent"), s.recentKeys, () =>
      $("tybe-recent").replaceChildren(...s.recentKeys.map((k) => el("span", { className: "chip" }, k))));
    $("tybe-send").disabled = s.composing;
    $("tybe-progress").textContent = s.progress
      ? (s.composing ? "sending: " : "sent: ") + s.progress.sent + "/" + s.progress.total + " frames, " + s.progress.acknowledged + " acknowledged"
      : (s.composing ? "sending…" : "");
    ui.logPane.hidden = !s.showLog;
    drawIfChanged(ui.log, s.log.length ? [s.log[0].id, s.log[s.log.length - 1].id, s.log.length] : [], () => {
      const atBottom = ui.log.scrollTop + ui.log.clientHeight >= ui.log.scrollHeight - 4;
      ui.log.replaceChildren(...s.log.map((entry) => el("div", { className: "log-" + entry.level.toLowerCase() },
        new Date(entry.time).toLocaleTimeString() + " " + entry.level.padEnd(5) + " " + entry.message)));
      if (atBottom) ui.log.scrollTop = ui.log.scrollHeight;
    });
    $("tybe-show-log-default").checked = s.showLogByDefault;
    $("tybe-reset-foreground").checked = s.resetBLEOnForeground;
    ui.host.hidden = !s.simulated || !s.host;
    if (s.host) {
      if (document.activeElement !== ui.hostSource) ui.hostSource.value = s.host.inputSource;
      $("tybe-host-text").textContent = s.host.text;
      $("tybe-host-keys").textContent = s.host.keystrokes + " keys received";
    }
  }

  return { build, render };
})();
