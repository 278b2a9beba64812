#!/usr/bin/env python3
"""Counts the test assertions that match an error's variant against those
that match message text, in the Rust sources of a revision (default: the
work tree): what issue 62 asked to see before and after.

    scripts/assertions.py [REV]

An assertion is a statement of assert!, assert_eq!, assert_ne!,
assert_logged( or a `let Enum::Variant {..} = .. else { panic!(..) }` in
test code (a tests/ folder, a tests.rs, or after #[cfg(test)]). It matches
text when it reads a message (.contains(, starts_with(, ends_with(,
to_string(), .message, assert_logged), and a variant when it names one
(matches!(, Err(Path::Variant, SomeError::Variant, a let-else). One that does
both counts as a variant assertion that also checks the text.
"""
import re
import subprocess
import sys

rev = sys.argv[1] if len(sys.argv) > 1 else None


def files():
    if rev:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev],
                             capture_output=True, text=True, check=True).stdout
    else:
        out = subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                             check=True).stdout
    return [f for f in out.split() if f.endswith(".rs") and not f.startswith("fuzz/")]


def text_of(path):
    if rev:
        return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True,
                              text=True, check=True).stdout
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_code(path, text):
    if "/tests/" in path or path.startswith("tests/") or path.endswith("tests.rs"):
        return text
    at = text.find("#[cfg(test)]")
    return text[at:] if at >= 0 else ""


START = re.compile(r"\b(assert!|assert_eq!|assert_ne!|assert_logged\(|let [A-Z]\w*::[A-Z]\w*)")
TEXT = re.compile(r"\.contains\(|starts_with\(|ends_with\(|to_string\(\)|\.message\b|assert_logged\(")
VARIANT = re.compile(r"matches!\(|Err\(\s*[A-Z]\w*::[A-Z]|\b[A-Z]\w*(Error|Fault|Late|Verdict|Holder)::[A-Z]|^let [A-Z]")


def statements(code):
    for m in START.finditer(code):
        depth, i = 0, m.end()
        # to the end of the macro's parenthesis
        while i < len(code):
            c = code[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    break
            elif c == ";" and depth == 0:
                break
            i += 1
        yield code[m.start():i]


text_n = variant_n = both = 0
for path in files():
    for s in statements(test_code(path, text_of(path))):
        t, v = bool(TEXT.search(s)), bool(VARIANT.search(s))
        if v:
            variant_n += 1
            both += t
        elif t:
            text_n += 1
print(f"{rev or 'work tree'}: {variant_n} variant assertions ({both} also check the text), "
      f"{text_n} text-only assertions")
