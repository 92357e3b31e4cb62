"""Make docs/images/report.png: the HTML report of docs/report.md's sample capture, as headless Chromium shows it.

Runs the page's Python example (```pycon blocks, checked as doctest: it builds sample.pcap with scapy) in a scratch
directory, then ``csum verify sample.pcap --html report.html`` and
``chromium --headless --no-sandbox --disable-gpu --screenshot=... --window-size=1000,1300 file://.../report.html``.
Usage: python tools/gen_report_image.py [OUT.png] (default docs/images/report.png; Chromium from Debian's package).
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "report.md"
SIZE = "1000,1300"


def main(argv: list[str]) -> int:
    out = Path(argv[0]).resolve() if argv else ROOT / "docs" / "images" / "report.png"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("gen_report_image: chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    text = "\n".join(body for lang, body in re.findall(r"^```(pycon|console)\n(.*?)^```$", PAGE.read_text(),
                                                          re.S | re.M) if lang == "pycon")
    with tempfile.TemporaryDirectory() as scratch:
        here = os.getcwd()
        os.chdir(scratch)
        try:
            test = doctest.DocTestParser().get_doctest(text, {"__name__": "__docs__"}, PAGE.name, str(PAGE), 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test)
        finally:
            os.chdir(here)
        if runner.failures:
            return 1
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        subprocess.run([sys.executable, "-m", "csum", "verify", "sample.pcap", "--html", "report.html"], cwd=scratch,
                       env=env, stdout=subprocess.DEVNULL)
        page = Path(scratch, "report.html")
        run = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                              f"--user-data-dir={scratch}/profile", f"--screenshot={out}", f"--window-size={SIZE}",
                              page.as_uri()], capture_output=True, text=True, timeout=120)
    if run.returncode or not out.exists():
        print(run.stderr, file=sys.stderr)
        return 1
    print(f"{out}: {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
