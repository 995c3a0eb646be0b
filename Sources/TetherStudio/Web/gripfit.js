// The GripFit screen (guide §3): live force chart, squeezes, tare, rate, recording, history.
"use strict";

studio.screens.gripfit = (() => {
  const D = "gripfit";
  const ui = {};
  const number = (v, digits) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits ?? 0));
  const stat = (id, label) => el("div", { className: "stat" }, el("div", { className: "value", id: id }, "—"), el("div", { className: "label" }, label));
  const when = (ms) => new Date(ms).toLocaleString();

  function build(section) {
    ui.dot = el("span", { className: "dot", id: "gripfit-dot" });
    ui.connection = el("span", { id: "gripfit-connection" }, "—");
    ui.scan = el("button", { type: "button", id: "gripfit-scan", onclick: () => act(D, "scan", { on: ui.state.connection !== "scanning" }) }, "Scan");
    ui.disconnect = el("button", { type: "button", id: "gripfit-disconnect", onclick: () => act(D, "disconnect") }, "Disconnect");
    ui.devices = el("span", { id: "gripfit-devices", className: "row" });
    ui.error = el("p", { className: "error", id: "gripfit-error", role: "alert", hidden: true });
    section.append(
      el("div", { className: "toolbar" }, el("h2", {}, "GripFit"), ui.dot, ui.connection, ui.scan, ui.disconnect, ui.devices),
      ui.error);

    ui.rate = el("input", { type: "number", id: "gripfit-rate-ms", min: 20, max: 1000, step: 10, value: 100 });
    ui.record = el("button", { type: "button", id: "gripfit-record", onclick: () => act(D, "record", { on: !ui.state.recording }) }, "Record");
    ui.slope = el("input", { type: "number", id: "gripfit-slope", step: "any", value: 0.001, title: "force units per raw count" });
    ui.offset = el("input", { type: "number", id: "gripfit-offset", step: 1, value: 0, title: "the raw count at zero force" });
    ui.simulator = el("div", { className: "row", hidden: true },
      el("span", { className: "muted" }, "Simulator:"),
      el("button", { type: "button", id: "gripfit-sim-squeeze", onclick: () => act(D, "simulateSqueeze", { peak: 380000 }) }, "Squeeze"),
      el("label", {}, el("input", { type: "checkbox", id: "gripfit-sim-auto", onchange: (e) => act(D, "simulateSqueezes", { on: e.target.checked }) }), " a squeeze every 5 s"),
      el("label", {}, el("input", { type: "checkbox", id: "gripfit-sim-fault", onchange: (e) => act(D, "simulateSensorFault", { on: e.target.checked }) }), " load-cell fault"));
    const live = el("div", { className: "card wide" },
      el("h3", {}, "Live force"),
      el("div", { className: "stats" },
        stat("gripfit-force", "force"), stat("gripfit-raw", "raw counts"),
        stat("gripfit-peak", "peak (squeeze)"), stat("gripfit-average", "average"), stat("gripfit-duration", "duration s"),
        stat("gripfit-best", "best peak"), stat("gripfit-readiness", "sensor"), stat("gripfit-interval", "interval ms"),
        stat("gripfit-firmware", "firmware")),
      el("div", { id: "gripfit-chart" }),
      legend([["series-force", "force (calibrated)"], ["series-raw", "raw counts (right scale)"]]),
      el("div", { className: "row" },
        el("button", { type: "button", id: "gripfit-tare", onclick: () => act(D, "tare") }, "Tare"),
        el("label", { for: "gripfit-rate-ms" }, "Interval (ms)"), ui.rate,
        el("button", { type: "button", id: "gripfit-rate", onclick: () => act(D, "rate", { ms: Number(ui.rate.value) }) }, "Set rate"),
        ui.record, el("span", { id: "gripfit-recording", className: "muted" }),
        el("button", { type: "button", id: "gripfit-reset-peak", onclick: () => act(D, "resetPeak") }, "Reset best")),
      el("div", { className: "row" },
        el("span", { className: "muted" }, "Calibration: force = slope × (raw − offset)"),
        el("label", { for: "gripfit-slope" }, "slope"), ui.slope, el("label", { for: "gripfit-offset" }, "offset"), ui.offset,
        el("button", { type: "button", id: "gripfit-calibrate", onclick: () => act(D, "calibrate", { slope: Number(ui.slope.value), zeroOffset: Number(ui.offset.value) }) }, "Apply"),
        el("button", { type: "button", id: "gripfit-raw-calibration", onclick: () => act(D, "calibrate", { raw: true }) }, "Raw"),
        el("span", { id: "gripfit-calibration", className: "muted" })),
      ui.simulator,
      el("p", { id: "gripfit-command-error", className: "error", hidden: true }));
    ui.sessions = el("tbody");
    const history = el("div", { className: "card" },
      el("h3", {}, "Sessions ", el("a", { href: "export/gripfit/sessions.csv", id: "gripfit-export-all" }, "(CSV)")),
      el("p", { id: "gripfit-history-error", className: "error", hidden: true }),
      el("table", { className: "list", id: "gripfit-sessions" },
        el("thead", {}, el("tr", {}, ...["Started", "Duration s", "Peak", "Average", "Samples", "", ""].map((t) => el("th", {}, t)))),
        ui.sessions),
      el("p", { id: "gripfit-last-saved", className: "muted" }));
    const curve = el("div", { className: "card" }, el("h3", { id: "gripfit-selected-title" }, "Session curve"), el("div", { id: "gripfit-curve" }));
    const trend = el("div", { className: "card" }, el("h3", {}, "Trend"), el("div", { id: "gripfit-trend" }),
      legend([["series-peak", "peak per session"], ["series-avg", "average per session"]]));
    section.append(el("div", { className: "grid" }, live, history, curve, trend));
    ui.chart = makeChart($("gripfit-chart"), "live force over the last 30 s", 900, 240);
    ui.curve = makeChart($("gripfit-curve"), "the selected session's force over time", 440, 200);
    ui.trend = makeChart($("gripfit-trend"), "peak and average force per session", 440, 200);
  }

  function render(s) {
    ui.state = s;
    ui.dot.className = "dot " + s.dot + (s.dot === "yellow" ? " spinning" : "");
    ui.connection.textContent = s.connection;
    ui.scan.textContent = s.connection === "scanning" ? "Stop" : "Scan";
    ui.disconnect.hidden = !(s.connection === "connected" || s.connection === "connecting");
    drawIfChanged(ui.devices, [s.devices, s.connection], () => ui.devices.replaceChildren(...(s.connection === "connected" ? [] : s.devices.map((d) =>
      el("button", { type: "button", className: "gripfit-connect", "data-id": d.id, onclick: () => act(D, "connect", { id: d.id }) },
        "Connect " + d.name + (d.rssi === undefined ? "" : " (" + d.rssi + " dBm)"))))));
    ui.error.hidden = !s.error;
    ui.error.textContent = s.error || "";
    $("gripfit-force").textContent = s.latest ? number(s.latest[0], s.calibration ? 2 : 0) : "—";
    $("gripfit-raw").textContent = s.latest ? number(s.latest[1]) : "—";
    const squeeze = s.squeeze || s.lastSqueeze;
    const digits = s.calibration ? 2 : 0;
    $("gripfit-peak").textContent = squeeze ? number(squeeze.peak, digits) : "—";
    $("gripfit-average").textContent = squeeze ? number(squeeze.average, digits) : "—";
    $("gripfit-duration").textContent = squeeze ? number(squeeze.duration, 2) : "—";
    $("gripfit-best").textContent = s.bestPeak === undefined ? "—" : number(s.bestPeak, digits);
    $("gripfit-readiness").textContent = { ready: "ready", notReady: "NOT READY", unknown: "—" }[s.readiness] || s.readiness;
    $("gripfit-readiness").classList.toggle("error", s.readiness === "notReady");
    $("gripfit-interval").textContent = s.sampleIntervalMs === undefined ? "—" : String(s.sampleIntervalMs);
    $("gripfit-firmware").textContent = s.firmware || "—";
    ui.record.textContent = s.recording ? "Stop & save" : "Record";
    $("gripfit-recording").textContent = s.recording ? "recording: " + s.recordingSamples + " samples" : "";
    $("gripfit-calibration").textContent = s.calibration ? "slope " + s.calibration.slope + ", offset " + s.calibration.zeroOffset : "raw counts";
    ui.simulator.hidden = !s.simulated;
    $("gripfit-sim-auto").checked = s.autoSqueezes;
    const commandError = $("gripfit-command-error");
    commandError.hidden = !(s.commandError || s.saveError);
    commandError.textContent = s.commandError || s.saveError || "";
    drawLive(s);
    drawHistory(s);
  }

  function drawLive(s) {
    // Raw counts on the force axis: scaled so both curves share the chart's height.
    const force = s.chart.map((p) => [p[0], p[1]]);
    let rawSeries = [];
    if (s.calibration && s.chart.length > 0) {
      const fMin = Math.min(...force.map((p) => p[1])), fMax = Math.max(...force.map((p) => p[1]));
      const rMin = Math.min(...s.chart.map((p) => p[2])), rMax = Math.max(...s.chart.map((p) => p[2]));
      const scale = rMax === rMin ? 0 : (fMax - fMin) / (rMax - rMin);
      rawSeries = [{ points: s.chart.map((p) => [p[0], fMin + (p[2] - rMin) * scale]), className: "series-raw" }];
    }
    drawLines(ui.chart, [{ points: force, className: "series-force" }, ...rawSeries], { empty: "no readings: connect a GripFit", xFormat: (v) => v.toFixed(1) + " s" });
    ui.chart.svg.dataset.points = String(s.chart.length);
  }

  function drawHistory(s) {
    drawIfChanged(ui.sessions, [s.sessions, s.selected && s.selected.id], () => {
      ui.sessions.replaceChildren(...s.sessions.map((session) => {
        const row = el("tr", { className: "clickable" + (s.selected && s.selected.id === session.id ? " selected" : ""), "data-id": session.id },
          el("td", {}, when(session.startedAt)), el("td", {}, number(session.duration, 1)),
          el("td", {}, number(session.maxForce, 0)), el("td", {}, number(session.averageForce, 0)), el("td", {}, String(session.samples)),
          el("td", {}, el("a", { href: "export/gripfit/" + encodeURIComponent(session.id) + ".csv", onclick: (e) => e.stopPropagation() }, "CSV")),
          el("td", {}, el("button", { type: "button", onclick: (e) => { e.stopPropagation(); act(D, "delete", { id: session.id }); } }, "Delete")));
        row.addEventListener("click", () => act(D, "select", { id: session.id }));
        return row;
      }));
    });
    const historyError = $("gripfit-history-error");
    historyError.hidden = !s.historyError;
    historyError.textContent = s.historyError || "";
    $("gripfit-last-saved").textContent = s.lastSaved
      ? "Last saved: peak " + number(s.lastSaved.maxForce) + ", " + s.lastSaved.samples + " samples over " + number(s.lastSaved.duration, 1) + " s"
      : (s.sessions.length === 0 ? "No sessions yet: Record, squeeze, then Stop & save." : "");
    $("gripfit-selected-title").textContent = s.selected ? "Session of " + when(s.selected.startedAt) : "Session curve (pick a session)";
    drawIfChanged(ui.curve.svg, [s.selected && s.selected.id, s.selectedCurve.length], () =>
      drawLines(ui.curve, [{ points: s.selectedCurve, className: "series-force" }], { empty: "pick a session", xFormat: (v) => v.toFixed(1) + " s" }));
    const ordered = s.sessions.slice().reverse();
    drawIfChanged(ui.trend.svg, s.sessions.map((x) => x.id), () => drawLines(ui.trend, [
      { points: ordered.map((x, i) => [i + 1, x.maxForce]), className: "series-peak" },
      { points: ordered.map((x, i) => [i + 1, x.averageForce]), className: "series-avg" },
      { points: ordered.map((x, i) => [i + 1, x.maxForce]), className: "series-peak", dots: true },
    ], { empty: "no sessions yet", xFormat: (v) => "#" + Math.round(v) }));
  }

  return { build, render };
})();
