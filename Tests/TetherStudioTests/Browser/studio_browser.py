"""Tether Studio in a real headless Chromium (Debian's chromium and chromium-driver, driven by
selenium from .venv): starts `tether studio --port 0 --driver simulator` on a fresh data
directory, goes through the screens as a person would, and prints one JSON object per check
({"check": name, "ok": bool, "detail": ...}) and a last summary line. Screenshots of each screen
go to --screenshots. StudioBrowserTests (Swift) runs it and asserts every check.

Every wait is bounded; nothing sleeps for a fixed time.
"""
import argparse
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 30  # seconds: the bound on any one wait


def start_studio(tether, data_dir):
    env = dict(os.environ, TETHER_DATA_DIR=data_dir)
    process = subprocess.Popen(
        [tether, "studio", "--port", "0", "--driver", "simulator"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, text=True)
    lines = queue.Queue()

    def pump(stream, name):
        for line in stream:
            lines.put((name, line))
        lines.put((name, None))

    threading.Thread(target=pump, args=(process.stdout, "out"), daemon=True).start()
    threading.Thread(target=pump, args=(process.stderr, "err"), daemon=True).start()
    deadline = time.monotonic() + 120
    seen = []
    closed = 0
    while time.monotonic() < deadline and closed < 2:
        try:
            name, line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            closed += 1  # both streams closed: the studio has exited
            continue
        seen.append(line)
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if name == "out" and match:
            return process, match.group(1)
    process.kill()
    raise RuntimeError("tether studio did not print its address: " + "".join(seen)[-2000:])


def make_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1440,1100", "--lang=en-US", "--no-first-run"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Run:
    def __init__(self, browser, url, screenshots):
        self.browser = browser
        self.url = url
        self.screenshots = screenshots
        self.results = []

    def wait(self, what, condition, timeout=WAIT):
        try:
            # The screens redraw as their state changes: an element found may be replaced.
            return WebDriverWait(self.browser, timeout, poll_frequency=0.1,
                                 ignored_exceptions=[NoSuchElementException, StaleElementReferenceException]).until(lambda b: condition(b))
        except Exception as error:
            raise AssertionError("waited %ds for %s" % (timeout, what)) from error

    def find(self, css):
        return self.browser.find_element(By.CSS_SELECTOR, css)

    def finds(self, css):
        return self.browser.find_elements(By.CSS_SELECTOR, css)

    def attributes(self, css, name):
        """The attribute `name` of every element matching `css`, read at one instant."""
        return self.browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.getAttribute(arguments[1]));", css, name)

    def texts(self, css):
        """The text of every element matching `css`, read at one instant."""
        return self.browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent);", css)

    def text(self, css):
        return self.find(css).text

    def click(self, css):
        self.wait("%s clickable" % css, lambda b: self.find(css).is_displayed() and self.find(css).is_enabled())
        # Found and clicked in one step, retried: a screen may redraw the element in between.
        self.wait("%s clicked" % css, lambda b: self.click_now(css))

    def click_now(self, css, containing=None):
        """Clicks the first element matching `css` (and containing the text `containing`) at
        one instant; false when there is none yet."""
        return self.browser.execute_script("""
            const e = [...document.querySelectorAll(arguments[0])].find((e) => arguments[1] === null || e.textContent.includes(arguments[1]));
            if (!e || e.disabled) return false;
            e.click();
            return true;""", css, containing)

    def open(self, screen):
        self.browser.get(self.url + "#" + screen)
        self.wait("the page's link to the server", lambda b: "connected" in self.text("#link") and "dis" not in self.text("#link"))
        self.wait("the %s screen shown" % screen, lambda b: self.find("#" + screen).is_displayed())
        if screen != "devices":
            self.wait("the %s screen drawn" % screen, lambda b: self.find("#" + screen).get_attribute("data-built") == "1")

    def console_errors(self):
        return [entry["message"] for entry in self.browser.get_log("browser") if entry["level"] == "SEVERE"]

    def shot(self, name):
        if self.screenshots:
            os.makedirs(self.screenshots, exist_ok=True)
            self.browser.save_screenshot(os.path.join(self.screenshots, name + ".png"))

    def check(self, name, body):
        """Runs one check: it fails on an exception, or on an error in the page's console (its
        own: the console is emptied after each check, failed or not)."""
        try:
            detail = body()
            errors = self.console_errors()
            assert not errors, "console errors: %r" % errors
            result = {"check": name, "ok": True, "detail": detail}
        except Exception as error:
            result = {"check": name, "ok": False, "detail": "%s: %s" % (type(error).__name__, error),
                      "trace": traceback.format_exc()[-1500:]}
            try:
                result["console"] = self.console_errors()
            except Exception as console_error:
                result["console"] = "unreadable: %s" % console_error
        self.results.append(result)
        print(json.dumps(result), flush=True)


def number(text):
    return float(text.replace(",", ""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tether", required=True)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="tether-studio-browser-")
    studio, url = start_studio(args.tether, data_dir)
    browser = None
    run = None
    try:
        browser = make_browser()
        run = Run(browser, url, args.screenshots)

        def screens_load():
            errors = {}
            for screen in ["devices", "gripfit", "flock", "tybe", "mesh", "kiro"]:
                run.open(screen)
                errors[screen] = run.console_errors()
            hidden = [a.get_attribute("data-screen") for a in run.finds("#tabs a") if not a.is_displayed()]
            assert not hidden, "tabs not shown: %r" % hidden
            assert all(not e for e in errors.values()), "console errors: %r" % errors
            return {"screens": list(errors)}
        run.check("screens_load_without_console_errors", screens_load)

        def devices_scan():
            run.open("devices")
            run.click("#scan")
            run.wait("five peripherals listed", lambda b: len(run.finds("#peripherals tbody tr")) >= 5)
            # Signal strength over time: a scan with duplicates keeps adding to each history.
            run.wait("a signal history of three points", lambda b: max(
                [len((p or "").split()) for p in run.attributes("#peripherals td.signal polyline", "points")] or [0]) >= 3)
            names = sorted(cell.text for cell in run.finds("#peripherals td.name"))
            run.click("#scan")
            run.shot("devices")
            return {"names": names}
        run.check("devices_scan_lists_the_simulated_devices", devices_scan)

        def gripfit_live():
            run.open("gripfit")
            run.click("#gripfit-scan")
            run.wait("a GripFit to connect", lambda b: run.click_now("button.gripfit-connect"))
            run.wait("connected", lambda b: run.text("#gripfit-connection") == "connected")
            run.wait("live points on the chart", lambda b: int(run.find("#gripfit-chart svg").get_attribute("data-points") or 0) >= 10)
            first = int(run.find("#gripfit-chart svg").get_attribute("data-points"))
            run.wait("more points", lambda b: int(run.find("#gripfit-chart svg").get_attribute("data-points")) > first)
            polyline = run.attributes("#gripfit-chart svg polyline.series-force", "points")[0]
            assert len(polyline.split()) >= 10, polyline
            return {"points": first, "dot": run.find("#gripfit-dot").get_attribute("class")}
        run.check("gripfit_chart_receives_live_points", gripfit_live)

        def gripfit_tare():
            # The emulated hand stops squeezing; at rest the HX711 reads its ~84 000 baseline.
            if run.find("#gripfit-sim-auto").is_selected():
                run.click("#gripfit-sim-auto")
            run.wait("the resting baseline", lambda b: 60000 < number(run.text("#gripfit-raw")) < 110000)
            before = number(run.text("#gripfit-raw"))
            run.click("#gripfit-tare")
            run.wait("readings near zero", lambda b: abs(number(run.text("#gripfit-raw"))) < 2000)
            after = number(run.text("#gripfit-raw"))
            return {"before": before, "after": after}
        run.check("gripfit_tare_zeroes_the_readings", gripfit_tare)

        def gripfit_record():
            run.click("#gripfit-record")
            run.wait("recording", lambda b: run.text("#gripfit-record") == "Stop & save")
            run.click("#gripfit-sim-squeeze")
            run.wait("the squeeze's peak", lambda b: run.text("#gripfit-peak") not in ("—", "") and number(run.text("#gripfit-peak")) > 300000)
            run.wait("the squeeze released", lambda b: abs(number(run.text("#gripfit-raw"))) < 20000)
            run.click("#gripfit-record")
            run.wait("a session saved", lambda b: len(run.finds("#gripfit-sessions tbody tr")) == 1)
            run.wait("the session picked", lambda b: run.click_now("#gripfit-sessions tbody tr"))
            run.wait("its curve", lambda b: len(run.finds("#gripfit-curve svg polyline")) == 1)
            run.shot("gripfit")
            return {"peak": number(run.text("#gripfit-peak")), "saved": run.text("#gripfit-last-saved")}
        run.check("gripfit_records_a_squeeze_and_saves_the_session", gripfit_record)

        def flock_detection():
            run.open("flock")
            run.click("#flock-scan")
            run.wait("the detector connected", lambda b: run.text("#flock-connection") == "Connected", timeout=40)
            run.click("#flock-sim-drive")
            run.wait("a detection listed", lambda b: len(run.finds("#flock-live tr.detection")) >= 1)
            run.wait("three kinds of camera", lambda b: len(set(run.attributes("#flock-live tr.detection", "data-type"))) >= 3)
            run.wait("the map of detections", lambda b: len(run.finds("#flock-map-svg circle")) >= 3)
            types = sorted(set(run.attributes("#flock-live tr.detection", "data-type")))
            run.click("#flock-stream")
            run.wait("debug stream lines", lambda b: len(run.finds("#flock-stream-view div")) >= 3)
            run.shot("flock")
            return {"types": types}
        run.check("flockfinder_detection_appears", flock_detection)

        def tybe_keyboard():
            run.open("tybe")
            run.click("#tybe-mode-keyboard")
            run.click("#tybe-capture")
            run.find("#tybe-capture").send_keys("hi")
            run.wait("the host typed hi", lambda b: run.text("#tybe-host-text") == "hi")
            run.click('button.tybe-toolbar[data-key="Tab"]')
            run.wait("the host typed a tab", lambda b: run.find("#tybe-host-text").get_attribute("textContent") == "hi\t")
            for pill in ["#tybe-link", "#tybe-bridge", "#tybe-dongle"]:
                run.wait(pill + " green", lambda b, pill=pill: "green" in run.find(pill).get_attribute("class"))
            frames = int(run.text("#tybe-frames"))
            assert frames >= 3, frames
            assert run.text("#tybe-last-key") == "⇥", run.text("#tybe-last-key")
            return {"frames": frames, "pills": [run.text(p) for p in ["#tybe-link", "#tybe-bridge", "#tybe-dongle"]]}
        run.check("tybe_keyboard_keys_become_frames_and_the_pills_turn_green", tybe_keyboard)

        def tybe_compose():
            run.click("#tybe-host-clear")
            run.wait("the host cleared", lambda b: run.find("#tybe-host-text").get_attribute("textContent") == "")
            Select(run.find("#tybe-host-source")).select_by_value("korean")
            run.click("#tybe-mode-compose")
            run.wait("compose mode", lambda b: run.find("#tybe-compose-text").is_displayed())
            if not run.find("#tybe-show-log").is_selected():
                run.click("#tybe-show-log")
            run.find("#tybe-compose-text").send_keys("안녕하세요 hello")
            assert run.find("#tybe-compose-text").get_attribute("value") == "안녕하세요 hello"
            run.click("#tybe-send")
            # A 2-set Korean host types the Latin keys as jamo (the host's input source is the user's).
            run.wait("the Korean host typed it", lambda b: run.text("#tybe-host-text") == "안녕하세요 ㅗ디ㅣㅐ")
            run.wait("every frame acknowledged", lambda b: re.search(r"sent: (\d+)/\1 frames, \1 acknowledged", run.text("#tybe-progress")))
            run.wait("the log's per-frame lines", lambda b: "acknowledged" in run.text("#tybe-log"))
            run.shot("tybe")
            return {"host": run.text("#tybe-host-text"), "progress": run.text("#tybe-progress")}
        run.check("tybe_compose_reaches_the_korean_host", tybe_compose)

        def mesh_chat():
            run.open("mesh")
            run.click("#mesh-scan")
            run.wait("the base radio", lambda b: any("Tether Base" in t for t in run.texts("button.mesh-connect")))
            run.wait("the base radio picked", lambda b: run.click_now("button.mesh-connect", "Tether Base"))
            run.wait("the radio ready", lambda b: run.text("#mesh-connection").startswith("ready"), timeout=45)
            run.wait("the green dot", lambda b: "green" in run.find("#mesh-dot").get_attribute("class"))
            run.wait("the Echo contact", lambda b: len(run.finds('#mesh-contacts li[data-name="Echo"]')) == 1)
            run.click('#mesh-contacts li[data-name="Echo"]')
            run.wait("the chat with Echo", lambda b: run.text("#mesh-chat-title") == "Chat with Echo")
            run.click("#mesh-text")
            run.find("#mesh-text").send_keys("hello from chromium\n")
            run.wait("the message confirmed", lambda b: len(run.finds('#mesh-messages .bubble.outgoing[data-status="delivered"]')) == 1, timeout=45)
            run.wait("the echo's reply", lambda b: "echo: hello from chromium" in run.texts("#mesh-messages .bubble.incoming .text"), timeout=45)
            ticks = run.text('#mesh-messages .bubble.outgoing[data-status="delivered"] .meta')
            assert "✓✓" in ticks, ticks
            run.shot("mesh")
            return {"ticks": ticks, "settings": run.text("#mesh-settings")[:200]}
        run.check("mesh_message_is_confirmed_and_a_reply_appears", mesh_chat)

        def kiro_pages():
            run.open("kiro")
            run.click("#kiro-connect")
            run.wait("connected", lambda b: "green" in run.find("#kiro-dot").get_attribute("class"), timeout=45)
            run.wait("the day on the panel", lambda b: "Review PRs" in run.text('#kiro-pages figure[data-page="overview"] pre'))
            run.click("#kiro-sim-select")
            run.wait("the overview on the panel", lambda b: len(run.finds('#kiro-pages figure.shown[data-page="overview"]')) == 1)
            run.click("#kiro-sim-enter")
            run.click("#kiro-sim-complete")
            run.wait("a focus session", lambda b: len(run.finds("#kiro-focus tr")) >= 1)
            day = run.find("#kiro-day").get_attribute("value").replace("Review PRs", "Review the studio")
            browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", run.find("#kiro-day"), day)
            run.click("#kiro-push")
            run.wait("the edited day on the panel", lambda b: "Review the studio" in run.text('#kiro-pages figure[data-page="overview"] pre'))
            run.shot("kiro")
            return {"focus": run.text("#kiro-focus-time"), "panel": run.text('#kiro-pages figure.shown figcaption')}
        run.check("kiro_pages_follow_the_device_and_an_edited_day_is_pushed", kiro_pages)

        def device_text_is_text():
            # Text from a device (what the emulated host typed) with markup: shown as text.
            run.open("tybe")
            run.click("#tybe-host-clear")
            Select(run.find("#tybe-host-source")).select_by_value("english")
            run.click("#tybe-mode-keyboard")
            run.click("#tybe-capture")
            hostile = "<b>bold</b><img src=x>"
            run.find("#tybe-capture").send_keys(hostile)
            run.wait("the host's text", lambda b: run.find("#tybe-host-text").get_attribute("textContent") == hostile)
            assert not run.finds("#tybe-host-text b") and not run.finds("#tybe-host-text img")
            # A mesh node whose name is markup advertises: its contact's name is text.
            run.open("mesh")
            name = "<script>window.__p=1</script>"
            field = run.find("#mesh-sim-name")
            field.clear()
            field.send_keys(name)
            run.click("#mesh-sim-advert")
            run.wait("the node a contact", lambda b: name in run.texts("#mesh-contacts li .name"), timeout=45)
            assert not run.finds("#mesh-contacts script")
            assert browser.execute_script("return window.__p === undefined")
            # The studio echoes an unknown action's name in its error: shown as text too.
            run.open("gripfit")
            echoed = '<img src=x onerror="window.__pwned=1">'
            browser.execute_script("act('gripfit', arguments[0]);", echoed)
            run.wait("the error shown", lambda b: echoed in run.text("#action-error"))
            assert not run.finds("#action-error img")
            assert browser.execute_script("return window.__pwned === undefined")
            return {"host": hostile, "banner": run.text("#action-error")}
        run.check("device_text_renders_as_text", device_text_is_text)
    finally:
        if browser is not None:
            browser.quit()
        studio.terminate()
        try:
            studio.wait(timeout=20)
        except subprocess.TimeoutExpired:
            studio.kill()
    results = run.results if run else [{"check": "browser_starts", "ok": False, "detail": "Chromium did not start"}]
    summary = {"ok": all(r["ok"] for r in results), "checks": len(results)}
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
