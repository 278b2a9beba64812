"""The snippets of the book (docs/src), by the marker before each block:
`<!-- snippet: NAME -->` for one a test runs as written, `<!-- not run: WHY -->`
for one no test can (hardware, another PC). test_book.py checks that every
shell, TOML and Python block of the Guide has one of the two."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "docs" / "src"

# A marker, then a fenced block: (marker, language, text).
BLOCK = re.compile(r"(?:<!-- (snippet|not run): ([^\n]*?) -->\n)?```(\w*)[^\n]*\n(.*?)^```",
                   re.S | re.M)


def blocks(page):
    """Every fenced block of a page: (kind, name or reason, language, text, end)."""
    text = (BOOK / page).read_text()
    return [(m[1], m[2], m[3], m[4], m.end()) for m in BLOCK.finditer(text)]


def snippet(page, name):
    """The text of the block marked `snippet: NAME` on the page."""
    found = [b for b in blocks(page) if b[0] == "snippet" and b[1] == name]
    assert len(found) == 1, f"{page} has {len(found)} snippets named {name}"
    return found[0][3]


def after(page, name):
    """The page's text after the snippet NAME's block (what it says it prints)."""
    end = next(b[4] for b in blocks(page) if b[0] == "snippet" and b[1] == name)
    return (BOOK / page).read_text()[end:]
