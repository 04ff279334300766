"""``kernbench report --html``: a self-contained page per results directory."""

from __future__ import annotations

import base64
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from kernbench.report import build_table
from kernbench.report.html import write_html_report, write_html_reports

# a 1×1 PNG (valid file: signature, IHDR, IDAT, IEND)
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class _Page(HTMLParser):
    """Collects the cells of every table row, the tags with their attributes, and the text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.rows: list[list[tuple[str, str]]] = []  # (class, text) per cell
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._class = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell, self._class = [], attrs.get("class") or ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append((self._class, "".join(self._cell).strip()))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture
def reference_store(make_store, spec_dict, add_cell, lin_li_csv):
    """Two datasets × two methods with published values (one near, one far), a failed cell,
    provenance meta and a figure."""
    table_spec = {
        "spread": "stderr",
        "reference": str(lin_li_csv),
        "reference_methods": {"AB-Stump": {"method": "AdaBoost-Stump", "T": 100}},
    }
    spec = spec_dict("ref", ["twonorm", "threenorm"], ["SVM-Stump", "AB-Stump"], table=table_spec)
    directory, store = make_store("ref", spec)
    store.set_meta("kernbench_version", "9.9.9")
    store.set_meta("provenance", {"git": {"sha": "abc123", "dirty": True}, "driver_host": "hostA"})
    rng = np.random.default_rng(0)
    centres = {"SVM-Stump": 3.0, "AB-Stump": 30.0}  # AB-Stump far from the published 5.06 / 21.8
    for d in ("twonorm", "threenorm"):
        for m, c in centres.items():
            for r in range(5):
                if (d, m, r) == ("threenorm", "SVM-Stump", 4):
                    add_cell(store, d, m, r, None, status="failed", error="ValueError: <boom> & co")
                    continue
                value = (c if d == "twonorm" else c + 14.7) + rng.normal(0, 0.2)
                result = {"versions": {"numpy": "2.0"}, "host": "worker1"}
                add_cell(store, d, m, r, value / 100, result=result)
    (directory / "figures").mkdir()
    (directory / "figures" / "trace.png").write_bytes(PNG)
    return directory


def test_page_has_published_ours_and_verdict_per_cell(reference_store):
    page_path = write_html_report(reference_store)
    assert page_path == reference_store / "report.html"
    page = parse(page_path)
    table = build_table(reference_store)
    body = {row[0][1]: row[1:] for row in page.rows if row and row[0][0] == "dataset"}
    for d in table.datasets:
        cells = body[d]
        for j, m in enumerate(table.methods):
            cell = table.cell(d, m)
            (pub_class, pub), (ours_class, ours), (verdict_class, verdict) = cells[
                3 * j : 3 * j + 3
            ]
            assert pub_class == "published" and pub == cell.published.text
            assert ours.startswith(f"{cell.mean:.2f}\u00a0±\u00a0{cell.spread:.2f}")  # one line
            assert ("best" in ours_class) == cell.best
            expected = "agrees" if cell.within_tolerance else "differs"
            assert verdict == expected and expected in verdict_class and expected in ours_class
    verdicts = [c[1] for row in body.values() for c in row if "verdict" in c[0]]
    assert "agrees" in verdicts and "differs" in verdicts  # both outcomes exercised
    assert "(n=4)" in body["threenorm"][1][1]  # the failed realisation is not averaged


def test_page_embeds_figures_and_gives_provenance_and_failed_cells(reference_store):
    page = parse(write_html_report(reference_store))
    images = {a["alt"]: a["src"] for t, a in page.tags if t == "img"}
    cd = images.pop("critical-difference diagram")  # the statistics over data sets
    assert cd.startswith("data:image/png;base64,")
    assert list(images.values()) == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    for tag, attrs in page.tags:  # nothing is loaded from elsewhere
        assert tag not in ("script", "link", "iframe")
        for key in ("src", "href"):
            assert key not in attrs or attrs[key].startswith("data:"), (tag, attrs)
    text = " ".join(page.text)
    for needle in ("9.9.9", "abc123 (dirty)", "hostA", "worker1", "numpy 2.0", "19 done, 1 failed"):
        assert needle in text, needle
    failed = [row for row in page.rows if len(row) == 5 and row[0][1] == "threenorm"]
    assert [c[1] for c in failed[0]] == [
        "threenorm",
        "4",
        "SVM-Stump",
        "failed",
        "ValueError: <boom> & co",
    ]


def test_tree_gets_an_index_linking_each_page(make_store, spec_dict, add_cell, tmp_path):
    for name in ("a", "b"):
        _, store = make_store(name, spec_dict(name, ["d"], ["M"], n_realisations=2))
        for r in range(2):
            add_cell(store, "d", "M", r, 0.1 * (r + 1))
    add_cell(store, "d", "M", 2, None, status="failed", error="boom", finished_at=1.7e9)
    paths = write_html_reports(tmp_path)
    assert paths[0] == tmp_path / "index.html"
    index = parse(paths[0])
    links = [a["href"] for t, a in index.tags if t == "a"]
    assert links == ["a/report.html", "b/report.html"]
    assert all((tmp_path / link).is_file() for link in links)
    rows = [[text for _, text in row] for row in index.rows]
    assert rows[0] == [
        "experiment",
        "results directory",
        "done",
        "not finished",
        "last cell finished",
    ]
    assert rows[1][:4] == ["Synthetic a", "a", "2", "0"]
    assert rows[2] == ["Synthetic b", "b", "2", "1", "2023-11-14 22:13:20 UTC"]


def test_cli_report_html(reference_store, tmp_path):
    from typer.testing import CliRunner

    from kernbench.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["report", str(reference_store), "--html"])
    assert res.exit_code == 0, res.output
    assert str(reference_store / "report.html") in res.output
    res = runner.invoke(app, ["report", str(reference_store)])  # HTML, the one format: no flag
    assert res.exit_code == 0 and str(reference_store / "report.html") in res.output
    res = runner.invoke(app, ["report", str(tmp_path / "nothing"), "--html"])
    assert res.exit_code == 2 and "no such file or directory" in res.output


def _browser():
    """A headless Chromium driven by Selenium, or a skip with the reason."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.skip(
            "no Chromium/chromedriver on PATH (Debian: apt install chromium chromium-driver)"
        )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    options.binary_location = binary
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(driver))


def test_page_loads_in_headless_chromium_without_console_errors(reference_store):
    page = write_html_report(reference_store)
    browser = _browser()
    try:
        browser.get(page.as_uri())
        from selenium.webdriver.common.by import By

        assert browser.title == "Synthetic ref"
        cells = browser.find_elements(By.CSS_SELECTOR, "table.results td.verdict")
        assert {c.text for c in cells} == {"agrees", "differs"}
        widths = [
            browser.execute_script("return arguments[0].naturalWidth", image)
            for image in browser.find_elements(By.TAG_NAME, "img")
        ]
        assert widths == [880, 1]  # both decoded: the CD diagram (8 in at 110 dpi), the figure
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
        shot = os.environ.get("KERNBENCH_REPORT_SCREENSHOT")  # docs/ keeps one, taken so
        if shot:
            browser.save_screenshot(shot)
    finally:
        browser.quit()


@pytest.fixture
def six_method_store(make_store, spec_dict, add_cell, lin_li_csv):
    """Lin & Li's Table I as the shipped spec lays it out: six methods, each with a published
    value, so the main table has 18 value columns."""
    methods = {
        "SVM-Stump": {"method": "SVM-Stump"},
        "AB-Stump-100": {"method": "AdaBoost-Stump", "T": 100},
        "AB-Stump-1000": {"method": "AdaBoost-Stump", "T": 1000},
        "SVM-Perc": {"method": "SVM-Perc"},
        "AB-Perc-100": {"method": "AdaBoost-Perc", "T": 100},
        "AB-Perc-1000": {"method": "AdaBoost-Perc", "T": 1000},
    }
    table = {"spread": "stderr", "reference": str(lin_li_csv), "reference_methods": methods}
    datasets = ["twonorm", "twonorm-n", "threenorm"]
    directory, store = make_store("wide", spec_dict("wide", datasets, list(methods), table=table))
    rng = np.random.default_rng(0)
    for d in datasets:
        for m in methods:
            for r in range(5):
                add_cell(store, d, m, r, (10 + rng.normal(0, 3)) / 100)
    long_error = "ValueError: " + "x" * 300 + "/a/very/long/path" * 20  # no place to break
    add_cell(store, "threenorm", "SVM-Stump", 5, None, status="failed", error=long_error)
    return directory


@pytest.mark.parametrize("width", [1400, 800])
def test_pages_do_not_overflow_the_window_in_headless_chromium(six_method_store, width):
    """At 1400 px the whole main table is visible; at 800 px it scrolls inside its own box and
    the page itself never scrolls sideways (index page included)."""
    second = six_method_store.parent / "second"
    shutil.copytree(six_method_store, second)
    index, *pages = write_html_reports(six_method_store.parent)
    browser = _browser()
    try:
        browser.set_window_size(width, 1000)
        for page in (index, *pages):
            browser.get(page.as_uri())
            inner, page_width = browser.execute_script(
                "return [window.innerWidth, document.documentElement.scrollWidth]"
            )
            assert page_width <= inner, (page.name, width, page_width, inner)
        browser.get(pages[0].as_uri())
        box, table = browser.execute_script(
            "const box = document.querySelector('table.results').parentElement;"
            "return [box.clientWidth, box.scrollWidth]"
        )
        if width == 1400:
            assert table <= box, f"the main table needs {table} px, the window gives {box}"
    finally:
        browser.quit()
