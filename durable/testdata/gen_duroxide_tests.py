#!/usr/bin/env python3
"""Builds durable/testdata/duroxide-tests.tsv: one row per test function in
duroxide's tests/ at a pinned commit, with the Go test that ports it or the
reason it does not apply. TestDuroxideTestTable (durable/duroxidetable_test.go)
checks the result offline.

Run from the repository root, with a local clone of microsoft/duroxide:

    python3 durable/testdata/gen_duroxide_tests.py --git-dir <duroxide>/.git \
        --commit 58cdc0eb6f009dad1d863a47b8809013e1623cdd --tag v0.1.26

Rows already in the table keep their status, go and note columns (hand work
survives a rerun); new rows are filled from the Go "mirrors" doc comments,
from the per-file defaults below, or marked "todo". Rows for tests that no
longer exist are dropped, and the header's count is rewritten.
"""
import argparse
import os
import re
import subprocess
import sys

OUT = "durable/testdata/duroxide-tests.tsv"

# Sections of tests/sqlite_provider_validations.rs (the comment above each
# group of tests) -> the providertest group that covers them.
SECTION_GROUP = {
    "Atomicity tests": "Orchestrator",
    "Error handling tests": "Orchestrator",
    "Instance locking tests": "Orchestrator",
    "Lock expiration tests": "Orchestrator",
    "Multi-execution tests": "Orchestrator",
    "Queue semantics tests": "Orchestrator",
    "Management tests": "Admin",
    "Instance creation tests": "Orchestrator",
    "Long polling tests (SQLite uses short polling)": "LongPoll",
    "Poison message tests": "Attempts",
    "abandon_work_item tests": "Worker",
    "Cancellation tests (activity cancellation support)": "Worker",
    "Lock-stealing activity cancellation tests": "Worker",
    "Deletion tests": "Admin",
    "Worker lock renewal tests": "Worker",
    "Lock expiry boundary tests": "Worker",
    "Prune tests": "Admin",
    "Bulk deletion tests": "Admin",
    "Capability filtering tests": "Capability",
    "Category I: Deserialization contract tests (provider-agnostic via ProviderFactory)": "Capability",
    "Category F2: Additional edge cases": "Capability",
    "Session Routing Validations": "Sessions",
    "Session Race Condition Validations": "Sessions",
    "Session Lock Expiry Boundary Validations": "Sessions",
    "Custom status tests": "Orchestrator",
    "Tag filtering tests": "Worker",
    "KV store tests": "KV",
    "KV delta tests (spec for kv_delta change)": "KV",
}

ATTR = re.compile(r"^\s*#\[(tokio::)?test\b")
FN = re.compile(r"\bfn\s+([a-z_][a-z0-9_]*)")
SNAKE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b(?!\.rs)")
RSFILE = re.compile(r"\b([a-z][a-z0-9_]*)\.rs\b")


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True, text=True).stdout


def rust_tests(gitdir, commit):
    """Yields (file, name, extra) for every #[test] / #[tokio::test] fn."""
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", commit).split("\n")
             if f.startswith("tests/") and f.endswith(".rs")]
    for f in sorted(files):
        lines = git(gitdir, "show", f"{commit}:{f}").split("\n")
        section, want, name = "", False, None
        for ln in lines:
            s = ln.strip()
            if s.startswith("//") and not s.startswith("///"):
                txt = s.lstrip("/").strip()
                if txt and not set(txt) <= set("=") and not txt.startswith("use "):
                    section = txt
            if ATTR.match(ln):
                want = True
                continue
            if want:
                m = FN.search(ln)
                if m:
                    name, want = m.group(1), False
                    yield f, name, {"section": section}
                continue


def go_mirrors(root):
    """Maps a snake_case name to [(dir.Func, rs-file hints, go file)] from the
    doc comments of Go test functions that say "mirrors"."""
    out = {}
    for d, _, fs in os.walk(root):
        if "/." in d or "testdata" in d:
            continue
        for fn in fs:
            if not fn.endswith("_test.go"):
                continue
            path = os.path.join(d, fn)
            rel = os.path.relpath(d, root)
            doc, cur = [], None
            for ln in open(path, encoding="utf-8"):
                if cur is not None:
                    # Inside a mirroring test: string literals naming Rust
                    # tests are its subtests (table-driven ports).
                    if ln.startswith("}"):
                        cur = None
                        continue
                    for lit in re.findall(r'(?:\{|t\.Run\()"([a-z][a-z0-9]*_[a-z0-9_]*)"', ln):
                        out.setdefault(lit, []).append((f"{cur[0]}/{lit}", cur[1], fn))
                    continue
                if ln.startswith("//"):
                    doc.append(ln[2:])
                    continue
                m = re.match(r"func (Test\w+)\(", ln)
                if m and any("mirrors" in x for x in doc):
                    text = " ".join(doc)
                    hints = set(RSFILE.findall(text))
                    for tok in SNAKE.findall(text):
                        out.setdefault(tok, []).append((f"{rel}.{m.group(1)}", hints, fn))
                    cur = (f"{rel}.{m.group(1)}", hints)
                doc = []
    return out


def camel(snake):
    return "".join(p[:1].upper() + p[1:] for p in snake.split("_") if p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--tag", required=True)
    a = ap.parse_args()

    old = {}
    if os.path.exists(OUT):
        for ln in open(OUT, encoding="utf-8"):
            if ln.startswith("#") or ln.startswith("file\t") or not ln.strip():
                continue
            c = ln.rstrip("\n").split("\t")
            old[(c[0], c[1])] = c[2:]

    tests = list(rust_tests(a.git_dir, a.commit))
    names_files = {}
    for f, n, _ in tests:
        names_files.setdefault(n, set()).add(f)
    mirrors = go_mirrors(".")
    pt_src = "".join(open(os.path.join("providertest", x), encoding="utf-8").read()
                     for x in os.listdir("providertest") if x.endswith(".go"))
    vsrc = git(a.git_dir, "show", f"{a.commit}:tests/sqlite_provider_validations.rs")

    rows = []
    for f, n, extra in tests:
        if (f, n) in old:
            rows.append([f, n, *old[(f, n)]])
            continue
        stem = os.path.basename(f)[:-3]
        if f == "tests/sqlite_provider_validations.rs":
            grp = SECTION_GROUP.get(extra["section"])
            if grp is None:
                sys.exit(f"no providertest group for section {extra['section']!r} ({n})")
            body = re.search(r"fn " + n + r"\(\)[^{]*\{(.*?)\n    \}", vsrc, re.S)
            called = re.search(r"\b(\w+)\(", body.group(1)).group(1) if body else ""
            case = camel(called[5:] if called.startswith("test_") else called)
            go = f"providertest.Run/{grp}"
            if f'"{case}"' in pt_src:
                go += "/" + case
            rows.append([f, n, "providertest", go, f"SQLite provider detail: validation {called} ({extra['section']})"])
            continue
        cands = []
        for go, hints, gofile in mirrors.get(n, []):
            if len(names_files[n]) > 1 and stem not in hints and stem not in gofile:
                continue
            if "/" in go and hints and stem not in hints:
                continue  # a subtest of a port of another Rust file
            if go not in cands:
                cands.append(go)
        # A subtest names the port more precisely than its parent.
        cands = [c for c in cands if not any(o.startswith(c + "/") for o in cands)]
        if cands:
            rows.append([f, n, "ported", ",".join(cands), ""])
        else:
            rows.append([f, n, "todo", "", "not ported yet"])

    with open(OUT, "w", encoding="utf-8") as w:
        w.write(f"""# Every test function in microsoft/duroxide tests/ at the pinned commit, one row each,
# with the Go test that ports it or the reason it does not apply.
# Checked by TestDuroxideTestTable (durable/duroxidetable_test.go).
# pinned: {a.tag} {a.commit}
# rows: {len(rows)}
# Regenerate (keeps existing rows, adds new ones from "mirrors" doc comments):
#   python3 durable/testdata/gen_duroxide_tests.py --git-dir <duroxide>/.git --commit {a.commit} --tag {a.tag}
# Columns (tab separated):
#   file    path of the Rust test file in duroxide
#   test    the Rust test function
#   status  ported | providertest | n/a | todo
#   go      ported: comma-separated <dir>.<TestFunc>[/<subtest>] of Go tests in this repository;
#           providertest: providertest.Run/<Group>[/<Case>] (each element after the function is a
#           string literal in that package's source, not necessarily the full -run path)
#   note    n/a: "<reason class>: detail"; todo: "not ported yet"; otherwise free text
""")
        w.write("file\ttest\tstatus\tgo\tnote\n")
        for r in rows:
            w.write("\t".join(r) + "\n")
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
