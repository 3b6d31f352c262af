#!/usr/bin/env python3
"""`kernrl report --format html` in a real browser (Debian's chromium, headless).

Renders fixture reports (tests/fixtures/report/html), opens each in chromium through the DevTools
protocol, and checks that every chart drew (its marks have a size on the page), that the page
logged no console error or warning and threw nothing, that no name from the records became markup
(no script, no event handler, no foreign element), and takes a screenshot whose pixels must hold
the charts' colors. The screenshots are left in --out.

Installs chromium with apt when it is missing; exits 77 (skipped) only when it cannot.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "report", "html")


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def install_chromium():
    """apt-get install chromium, as root or through passwordless sudo. False when impossible."""
    if os.geteuid() == 0:
        sudo = []
    elif shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        sudo = ["sudo", "-n"]
    else:
        return False
    if not shutil.which("apt-get"):
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    print("chromium is missing: installing it with apt-get", flush=True)
    subprocess.run(sudo + ["apt-get", *lock, "update", "-qq"], env=env)
    r = subprocess.run(sudo + ["apt-get", *lock, "install", "-y", "-qq", "--no-install-recommends", "chromium"],
                       env=env)
    return r.returncode == 0 and find_chromium() is not None


class Browser:
    """chromium --headless driven over --remote-debugging-pipe (fd 3: commands in, fd 4: out)."""

    def __init__(self, chromium, profile):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def child_fds():
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [chromium, "--headless=new", "--remote-debugging-pipe", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--hide-scrollbars", "--user-data-dir=" + profile, "--window-size=1280,1000"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # chromium refuses to run as root with its sandbox
        self.proc = subprocess.Popen(args + ["about:blank"], preexec_fn=child_fds, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe (exit %s)" % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# Measured in the page: every chart, how many of its marks have a size, and what markup there is.
PROBE = r"""(() => {
  const charts = [...document.querySelectorAll('svg.chart')].map(svg => {
    const marks = [...svg.querySelectorAll('.mark')];
    const drawn = marks.filter(m => { const b = m.getBBox(); return b.width > 0 && b.height > 0; });
    const r = svg.getBoundingClientRect();
    return {label: svg.getAttribute('aria-label'), marks: marks.length, drawn: drawn.length,
            width: r.width, height: r.height};
  });
  const all = [...document.querySelectorAll('*')];
  const handlers = all.filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on')))
                      .map(e => e.outerHTML.slice(0, 120));
  const tags = [...new Set(all.map(e => e.localName))].sort();
  const links = [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'));
  return {title: document.title, charts, handlers, tags, links, scripts: document.scripts.length,
          text: document.body.innerText};
})()"""

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "a", "nav",
                "div", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong", "svg",
                "text", "rect", "circle", "line"}


def png_pixels(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            depth, color, interlace = body[8], body[9], body[12]
            assert depth == 8 and color in (2, 6) and interlace == 0, "unexpected PNG format"
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def check_page(browser, html_path, shot_path, expect):
    """Opens one report; returns a list of failures."""
    failures = []
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        browser.send(domain + ".enable", session=session)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=session)
    browser.send("Page.navigate", {"url": "file://" + os.path.abspath(html_path)}, session=session)
    browser.wait_event("Page.loadEventFired")
    probe = browser.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True},
                         session=session)["result"]["value"]
    shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                        session=session)
    png = base64.b64decode(shot["data"])
    with open(shot_path, "wb") as f:
        f.write(png)
    time.sleep(0.2)
    browser.send("Target.closeTarget", {"targetId": target})

    # Console errors, warnings and exceptions (a CSP violation, a resource that failed to load).
    for e in browser.events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            failures.append("exception: %s" % params.get("exceptionDetails", {}).get("text"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            failures.append("console %s: %s" % (params["type"], params.get("args")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            failures.append("log %s: %s" % (params["entry"]["level"], params["entry"].get("text")))
    browser.events.clear()

    if probe["title"] != "kernrl report":
        failures.append("title is %r" % probe["title"])
    charts = probe["charts"]
    labels = [c["label"] for c in charts]
    for want in expect["charts"]:
        if not any(want in (l or "") for l in labels):
            failures.append("no chart %r among %r" % (want, labels))
    if len(charts) != expect["count"]:
        failures.append("%d charts, expected %d" % (len(charts), expect["count"]))
    for c in charts:
        if c["drawn"] == 0 or c["width"] < 100 or c["height"] < 40:
            failures.append("chart %r did not draw: %r" % (c["label"], c))
    if probe["scripts"]:
        failures.append("%d script elements" % probe["scripts"])
    if probe["handlers"]:
        failures.append("event handler attributes: %r" % probe["handlers"])
    foreign = [t for t in probe["tags"] if t not in ALLOWED_TAGS]
    if foreign:
        failures.append("unexpected elements: %r" % foreign)
    if any(not l.startswith("#") for l in probe["links"]):
        failures.append("links leaving the page: %r" % probe["links"])
    for text in expect.get("texts", []):
        if text not in probe["text"]:
            failures.append("text %r is not shown as text" % text)

    width, height, rows = png_pixels(png)
    pixels = [p for row in rows[::2] for p in row[::2]]
    ink = sum(1 for p in pixels if min(p) < 235) / len(pixels)
    # The charts' colors (run palette and statuses), as drawn: bars are solid.
    palette = {c: tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in expect["colors"]}
    seen = {name for name, rgb in palette.items()
            if sum(1 for p in pixels if all(abs(p[i] - rgb[i]) <= 6 for i in range(3))) >= 50}
    if ink < 0.02:
        failures.append("the screenshot is nearly blank (%.1f%% ink)" % (100 * ink))
    if len(seen) < len(palette):
        failures.append("chart colors missing from the screenshot: %r" % sorted(set(palette) - seen))
    print("  %s: %d charts (%d marks drawn), %dx%d screenshot, %.0f%% ink, %s" % (
        os.path.basename(html_path), len(charts), sum(c["drawn"] for c in charts), width, height,
        100 * ink, shot_path))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    ap.add_argument("--out", required=True, help="folder for the reports and screenshots")
    args = ap.parse_args()

    chromium = find_chromium()
    if not chromium and not install_chromium():
        print("SKIP: chromium is not installed and could not be installed")
        return SKIP
    chromium = find_chromium()
    os.makedirs(args.out, exist_ok=True)

    fx = lambda name: os.path.join(FIXTURES, name)
    fast = ["fast_%s" % p for p in ("0", "0.5", "0.8", "1", "1.5", "2")]
    pages = [
        ("runs.html", [fx("runs.jsonl"), "--baseline", fx("base.jsonl"), "--run", "model-a", "--by", "level",
                       "--k", "1,2"],
         {"count": 14, "charts": ["Speedup of correct samples", "pass@1", "pass@2", *fast, "Mean SOL fraction", "sol_fraction",
                                  "Statuses", "Speedup now", "Correct rate now"],
          "colors": ["#0072b2", "#009e73", "#d55e00"]}),
        ("runs_all.html", [fx("runs.jsonl"), "--sort", "pass@1"],
         {"count": 11, "charts": ["Speedup of correct samples", "pass@1", "Mean SOL fraction", "sol_fraction", "Statuses"],
          "colors": ["#0072b2", "#e69f00", "#009e73"]}),
        ("hostile.html", [fx("hostile.jsonl"), "--baseline", fx("hostile_base.jsonl"), "--by", "problem"],
         {"count": 13, "charts": ["Speedup of correct samples", "Statuses", "Speedup now"],
          "colors": ["#0072b2", "#e69f00"],
          "texts": ["</title><script>alert('run')</script>", "L1_1_<img src=x onerror=alert(1)>",
                    "L1_2_</style><script>alert(3)</script>"]}),
        ("training.html", [fx("training.jsonl"), "--by", "step"],
         {"count": 17, "charts": ["Speedup of correct samples", "Statuses", "Per-turn rates: serve",
                                  "Solved within T turns", "Correct rate over training",
                                  "Format and compile rates over training", "Mean reward over training",
                                  "Reward spread", "Speedup quantiles", "Suspicious rate over training"],
          "colors": ["#0072b2", "#e69f00", "#009e73"]}),
        ("levels.html", [fx("../levels.jsonl"), "--by", "level"],
         {"count": 11, "charts": ["Speedup of correct samples", "Mean SOL fraction", "sol_fraction", "Statuses"],
          "colors": ["#0072b2"]}),
    ]
    failed = False
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(chromium, profile)
        try:
            for name, report_args, expect in pages:
                html = os.path.join(args.out, name)
                with open(html, "wb") as f:
                    r = subprocess.run([args.kernrl, "report", *report_args, "--format", "html"], stdout=f,
                                       stderr=subprocess.PIPE)
                if r.returncode not in (0, 1):
                    print("FAIL %s: kernrl report exited %d: %s" % (name, r.returncode, r.stderr.decode()))
                    failed = True
                    continue
                failures = check_page(browser, html, html[:-5] + ".png", expect)
                for f in failures:
                    print("FAIL %s: %s" % (name, f))
                failed |= bool(failures)
                if not failures:
                    print("ok   %s" % name)
        finally:
            browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
