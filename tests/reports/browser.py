"""Reports measured in a real browser: Debian's ``chromium``, headless, one process for all pages.

Every report is put into one harness page as ``<iframe srcdoc>`` at each width (an iframe's
document lays out with the iframe as its viewport, media queries included), and a probe
script in the harness — never in a report — measures each one after load and writes the
results into the page, which ``chromium --dump-dom`` prints. No browser driver, no network,
no download: the browser is the system's (``apt-get install chromium``; ``.ci/run`` does it).

Also a script: ``python -m tests.reports.browser OUT_DIR`` (``make screenshots``) writes a
PNG of every report kind at both widths for a reviewer.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

WIDTHS = (500, 1280)
FRAME_HEIGHT = 1400
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Runs in the harness after every frame has loaded; results go into <pre id="out">.
PROBE = r"""
const ARABIC = /[\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF]/;
const STRONG = /[A-Za-z\u00C0-\u024F\u0600-\u06FF\u0750-\u077F\uFB50-\uFDFF\uFE70-\uFEFF\u0590-\u05FF]/;
function firstStrongRtl(text) { const m = text.match(STRONG); return m !== null && ARABIC.test(m[0]); }
function corners(t) {
  // the label's own box, turned with it (rotated labels are compared as drawn, not by
  // their upright bounding boxes)
  const b = t.getBBox(), m = t.getScreenCTM();
  return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
    .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
}
function intersect(p, q) {
  // separating axis test for two convex quadrilaterals; touching within half a pixel is apart
  for (const poly of [p, q]) for (let i = 0; i < 4; i++) {
    const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4];
    const len = Math.hypot(x2 - x1, y2 - y1) || 1, nx = (y2 - y1) / len, ny = (x1 - x2) / len;
    const proj = pts => pts.map(([x, y]) => nx * x + ny * y);
    const a = proj(p), b = proj(q);
    if (Math.max(...a) <= Math.min(...b) + 0.5 || Math.max(...b) <= Math.min(...a) + 0.5) return false;
  }
  return true;
}
function labelOverlaps(svg) {
  // axis labels (per axis) drawn on top of each other: "−0.0010.000" is two labels in one place
  const found = [];
  for (const axis of svg.querySelectorAll(".role-axis")) {
    const boxes = Array.from(axis.querySelectorAll(".role-axis-label text"))
      .filter(t => t.textContent.trim() && t.getAttribute("opacity") !== "0")
      .map(t => [t.textContent, corners(t)]);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++)
      if (intersect(boxes[i][1], boxes[j][1])) found.push(boxes[i][0] + "|" + boxes[j][0]);
  }
  return found;
}
function probe(frame) {
  const doc = frame.contentDocument, root = doc.documentElement, win = frame.contentWindow;
  const out = {name: frame.dataset.name, width: Number(frame.dataset.width),
               scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, innerWidth: win.innerWidth};
  const banner = doc.getElementById("decision");
  if (banner) {
    const r = banner.getBoundingClientRect();
    out.banner = {top: r.top + win.scrollY, bottom: r.bottom + win.scrollY,
                  word: banner.querySelector(".word").innerText.trim(),
                  why: (banner.querySelector(".why") || {innerText: ""}).innerText.trim(),
                  next: (banner.querySelector(".next") || {innerText: ""}).innerText.trim(),
                  color: win.getComputedStyle(banner.querySelector(".word")).color,
                  background: win.getComputedStyle(banner).backgroundColor};
  }
  out.text = doc.body.innerText.slice(0, 2000);
  out.scrollHeight = root.scrollHeight;
  out.charts = Array.from(doc.querySelectorAll("figure.chart svg")).map(svg => ({
    title: Array.from(svg.querySelectorAll(".role-title-text")).map(t => t.textContent.trim()).join(" "),
    axisTitles: Array.from(svg.querySelectorAll(".role-axis-title text")).map(t => t.textContent.trim())
                  .filter(t => t.length > 0),
    marks: svg.querySelectorAll(".role-mark path, .role-mark line").length,
    overlaps: labelOverlaps(svg),
    width: svg.getBoundingClientRect().width, label: svg.getAttribute("aria-label")}));
  out.rtl = [];
  for (const el of doc.querySelectorAll("td, th, li, p, h1, h2, h3, summary, figcaption, caption")) {
    const text = el.textContent.trim();
    if (text && firstStrongRtl(text)) out.rtl.push({tag: el.tagName.toLowerCase(), text: text.slice(0, 60),
                                                     direction: win.getComputedStyle(el).direction});
  }
  out.overflowing = [];
  for (const el of doc.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.right > root.clientWidth + 0.5 && !el.closest(".scroll")) {
      out.overflowing.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined
        ? "." + el.className : ""));
      if (out.overflowing.length > 5) break;
    }
  }
  // then every folded section opened, as a reader would: the page still must not scroll
  // sideways, and each table box reports whether its table fits or scrolls inside it
  for (const d of doc.querySelectorAll("details")) d.open = true;
  out.opened = {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, overflowing: [],
                boxes: Array.from(doc.querySelectorAll(".scroll")).map(box => {
                  const head = box.previousElementSibling, fold = box.closest("details");
                  const title = head && head.tagName === "H2" ? head.textContent.trim()
                    : fold ? fold.querySelector("summary").textContent.trim() : "";
                  return {title: title.slice(0, 80), scrollWidth: box.scrollWidth, clientWidth: box.clientWidth};
                })};
  for (const el of doc.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.right > root.clientWidth + 0.5 && !el.closest(".scroll")) {
      out.opened.overflowing.push(el.tagName.toLowerCase());
      if (out.opened.overflowing.length > 5) break;
    }
  }
  return out;
}
window.addEventListener("load", () => {
  const results = Array.from(document.querySelectorAll("iframe")).map(f => {
    try { return probe(f); } catch (e) { return {name: f.dataset.name, width: Number(f.dataset.width), error: String(e)}; }
  });
  document.getElementById("out").textContent = JSON.stringify(results);
});
"""


def find_browser() -> str | None:
    """The system's Chromium (or Chrome), or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """The browser for a test: skip without one, except under CI=true, where it must be there."""
    import pytest

    found = find_browser()
    if found is not None:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is missing but CI=true: the browser checks must run "
                    "(apt-get install -y chromium; .ci/run installs it)")
    pytest.skip("needs a headless chromium for the browser checks (sudo apt-get install -y chromium)")


def dump_dom(path: Path, browser: str, timeout: float = 60) -> str:
    """The DOM of one page after its scripts ran (offline; a file URL)."""
    with tempfile.TemporaryDirectory(prefix="tooldisc-browser-") as tmp:
        res = subprocess.run([browser, *_flags(str(Path(tmp) / "profile")), "--virtual-time-budget=10000",
                              "--dump-dom", path.resolve().as_uri()], capture_output=True, text=True,
                             timeout=timeout, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{browser} --dump-dom failed (exit {res.returncode}): {res.stderr[-2000:]}")
    return res.stdout


def _flags(profile: str) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
            "--no-first-run", "--disable-extensions", "--disable-background-networking",
            "--disable-sync", "--disable-component-update", "--disable-default-apps",
            f"--user-data-dir={profile}"]


def harness(pages: Mapping[str, str], widths: Sequence[int] = WIDTHS) -> str:
    """One page holding every report at every width, and the probe."""
    frames = []
    for name, text in pages.items():
        for w in widths:
            frames.append(f'<iframe data-name="{html.escape(name)}" data-width="{w}" width="{w}" '
                          f'height="{FRAME_HEIGHT}" srcdoc="{html.escape(text, quote=True)}"></iframe>')
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><style>iframe{display:block;border:0}</style>"
            "</head><body>\n" + "\n".join(frames) + f'\n<pre id="out"></pre>\n<script>{PROBE}</script>\n'
            "</body></html>\n")


def measure(pages: Mapping[str, str], browser: str, widths: Sequence[int] = WIDTHS,
            timeout: float = 120) -> list[dict[str, Any]]:
    """Load every page at every width in one headless browser; the probe's results."""
    with tempfile.TemporaryDirectory(prefix="tooldisc-browser-") as tmp:
        page = Path(tmp) / "harness.html"
        page.write_text(harness(pages, widths), encoding="utf-8")
        res = subprocess.run([browser, *_flags(str(Path(tmp) / "profile")), "--virtual-time-budget=20000",
                              "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=timeout,
                             check=False)
    found = re.search(r'<pre id="out">(.*?)</pre>', res.stdout, re.DOTALL)
    if res.returncode != 0 or found is None or not found.group(1).strip():
        raise RuntimeError(f"{browser} --dump-dom failed (exit {res.returncode}): {res.stderr[-2000:]}")
    return json.loads(html.unescape(found.group(1)))


def screenshots(pages: Mapping[str, str], browser: str, out: Path, widths: Sequence[int] = WIDTHS) -> list[Path]:
    """A full-height PNG of every page at every width: each page's height measured first (one
    browser run for all), then one run per picture at that height."""
    out.mkdir(parents=True, exist_ok=True)
    heights = {(r["name"], r["width"]): max(800, min(20_000, int(r.get("scrollHeight", 4000))))
               for r in measure(pages, browser, widths)}
    written = []
    with tempfile.TemporaryDirectory(prefix="tooldisc-shots-") as tmp:
        for name, text in pages.items():
            src = Path(tmp) / f"{name}.html"
            src.write_text(text, encoding="utf-8")
            for w in widths:
                png = out / f"{name}-{w}.png"
                subprocess.run([browser, *_flags(str(Path(tmp) / "profile")),
                                f"--window-size={w},{heights[(name, w)]}", f"--screenshot={png}", src.as_uri()],
                               capture_output=True, timeout=120, check=True)
                written.append(png)
    return written


def main(argv: Sequence[str]) -> int:
    """``python -m tests.reports.browser OUT_DIR``: screenshots of every report kind."""
    from tests.reports.report_pages import all_pages

    if len(argv) != 1:
        print("usage: python -m tests.reports.browser OUT_DIR", file=sys.stderr)
        return 2
    browser = find_browser()
    if browser is None:
        print("no chromium found: sudo apt-get install -y chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tooldisc-pages-") as tmp:
        pages = all_pages(Path(tmp))
    for png in screenshots(pages, browser, Path(argv[0])):
        print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
