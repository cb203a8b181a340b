#!/usr/bin/python3
"""The log tags: the registry (mod_journal/core/jr_log_tags.h, read through the C preprocessor),
the code that logs them (module, core, worker, CLI) and the table in docs/operations.md agree.

- each tag is registered once, with a level of CRIT, ERR, WARN, INFO or DEBUG;
- every tag the code or the tests name is registered;
- every registered tag is logged somewhere, always with the same format (one message per tag,
  wherever it is logged from); a message is a JR_LOG/MJ_LOG/MJ_RLOG/MJ_LOG_AT call, or a string
  literal that starts with the tag (what the forked worker child writes before exec). httpd's
  and stdio's own calls never carry a tag by hand: the level would bypass the registry;
- every registered tag has exactly one row in the Logs table of docs/operations.md, whose
  level column starts with the registered level, and every row names registered tags.
"""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY = os.path.join(TOP, "mod_journal", "core", "jr_log_tags.h")
DOC = os.path.join(TOP, "docs", "operations.md")
CODE_DIRS = ["mod_journal", "workers", "tools"]
TEST_DIRS = ["tests"]
LEVEL_WORDS = {"CRIT": "crit", "ERR": "error", "WARN": "warning", "INFO": "info",
               "DEBUG": "debug"}
# The log macros and the position of their format argument (the tag is always the first).
MACROS = {"JR_LOG": 2, "MJ_LOG": 3, "MJ_RLOG": 3, "MJ_LOG_AT": 4}
# Calls that must not carry a hand-written tag.
RAW_LOGGERS = {"ap_log_error", "ap_log_rerror", "ap_log_cerror", "ap_log_perror",
               "ap_log_error_", "ap_log_rerror_", "jr_log_emit", "printf", "fprintf",
               "vfprintf", "puts", "fputs"}
TAG = re.compile(r"JR\d{5}")
TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*|\w+|\S',
                   re.S)

errors = []


def fail(msg):
    errors.append(msg)


def registry():
    src = ('#include "%s"\n#define X(tag, level) @@ tag level\nJR_LOG_TAGS(X)\n' % REGISTRY)
    out = subprocess.run([os.environ.get("CC", "cc"), "-E", "-P", "-x", "c", "-"], input=src,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("log tags: cannot preprocess %s:\n%s" % (REGISTRY, out.stderr))
    tags = {}
    for row in out.stdout.split("@@")[1:]:
        parts = row.split()
        if len(parts) != 2 or not TAG.fullmatch(parts[0]):
            fail("log tags: a malformed row in jr_log_tags.h: %r" % row.strip())
            continue
        tag, level = parts
        if tag in tags:
            fail("log tags: %s is registered twice" % tag)
        if level not in LEVEL_WORDS:
            fail("log tags: %s has the level %s (use CRIT, ERR, WARN, INFO or DEBUG)"
                 % (tag, level))
        tags[tag] = level
    if not tags:
        sys.exit("log tags: no tags found in %s" % REGISTRY)
    return tags


def sources(dirs, exts):
    for d in dirs:
        for root, _, files in os.walk(os.path.join(TOP, d)):
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.join(root, f)


def code_tokens(text):
    """(token, line) without comments and preprocessor lines (macro definitions)."""
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.M)
    line = 1
    pos = 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        tok = m.group(0)
        if not tok.startswith(("/*", "//")):
            yield tok, line


def literal(tok):
    return tok.startswith('"')


def split_args(toks, i):
    """toks[i] is '(': the top-level arguments as token lists, and the index after ')'."""
    depth, args, cur = 0, [], []
    for j in range(i, len(toks)):
        t = toks[j][0]
        if t in "([{":
            depth += 1
            if depth == 1:
                continue
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args, j + 1
        elif t == "," and depth == 1:
            args.append(cur)
            cur = []
            continue
        cur.append(toks[j])
    return args, len(toks)


def fmt_of(arg):
    """The format as written: adjacent literals joined, macro names kept."""
    out = []
    for t, _ in arg:
        if literal(t):
            if out and out[-1].startswith('"'):
                out[-1] = out[-1][:-1] + t[1:]
            else:
                out.append(t)
        else:
            out.append(t)
    return " ".join(out)


def enclosing_call(toks, i):
    """The name of the call whose argument list holds toks[i], or None."""
    depth = 0
    for j in range(i - 1, -1, -1):
        t = toks[j][0]
        if t in ")]}":
            depth += 1
        elif t in "([{":
            if depth == 0:
                return toks[j - 1][0] if t == "(" and j > 0 else None
            depth -= 1
        elif t in (";", "{", "}") and depth == 0:
            return None
    return None


def scan_code(tags):
    messages = {}  # tag -> {format: [where]}
    for path in sources(CODE_DIRS, (".c", ".h")):
        if os.path.samefile(path, REGISTRY):
            continue
        rel = os.path.relpath(path, TOP)
        text = open(path, encoding="utf-8").read()
        for m in TAG.finditer(text):
            if m.group(0) not in tags:
                line = text.count("\n", 0, m.start()) + 1
                fail("log tags: %s:%d names %s, which jr_log_tags.h does not register"
                     % (rel, line, m.group(0)))
        toks = list(code_tokens(text))
        in_macro = set()
        for i, (t, line) in enumerate(toks):
            if t in MACROS and i + 1 < len(toks) and toks[i + 1][0] == "(":
                args, _ = split_args(toks, i + 1)
                where = "%s:%d" % (rel, line)
                if len(args) <= MACROS[t] or len(args[0]) != 1:
                    fail("log tags: %s: %s(...) needs a tag and a format" % (where, t))
                    continue
                tag = args[0][0][0]
                fmt = args[MACROS[t]]
                for tok in fmt:
                    in_macro.add(id(tok))
                if not TAG.fullmatch(tag):
                    fail("log tags: %s: %s(%s, ...) does not name a tag" % (where, t, tag))
                    continue
                if not fmt or not literal(fmt[0][0]):
                    fail("log tags: %s: the format of %s must be a string literal"
                         % (where, tag))
                elif TAG.match(fmt[0][0][1:]):
                    fail("log tags: %s: the format of %s starts with a tag: %s adds it"
                         % (where, tag, t))
                messages.setdefault(tag, {}).setdefault(fmt_of(fmt), []).append(where)
            elif literal(t) and id(toks[i]) not in in_macro and TAG.match(t[1:]) \
                    and t[8:10] == ": " and (i == 0 or not literal(toks[i - 1][0])):
                where = "%s:%d" % (rel, line)
                call = enclosing_call(toks, i)
                if call in RAW_LOGGERS:
                    fail("log tags: %s: %s is logged through %s by hand: use MJ_LOG, MJ_RLOG "
                         "or JR_LOG, which take its level from the registry"
                         % (where, t[1:8], call))
                j = i
                chain = []
                while j < len(toks) and literal(toks[j][0]):
                    chain.append(toks[j])
                    j += 1
                fmt = fmt_of(chain)
                messages.setdefault(t[1:8], {}).setdefault('"' + fmt[10:], []).append(where)
    return messages


def scan_tests(tags):
    for path in sources(TEST_DIRS, (".c", ".h", ".py")):
        text = open(path, encoding="utf-8", errors="replace").read()
        for m in TAG.finditer(text):
            if m.group(0) not in tags:
                line = text.count("\n", 0, m.start()) + 1
                fail("log tags: %s:%d names %s, which jr_log_tags.h does not register"
                     % (os.path.relpath(path, TOP), line, m.group(0)))


def scan_doc(tags):
    text = open(DOC, encoding="utf-8").read()
    start = text.find("\n## Logs\n")
    if start < 0:
        fail("log tags: docs/operations.md has no '## Logs' section")
        return
    end = text.find("\n## ", start + 1)
    rows = {}
    for line in text[start:end if end > 0 else len(text)].splitlines():
        if not line.startswith("| `JR"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        row_tags = re.findall(r"`(JR\d{5})`", cells[0])
        level = cells[1].split()[0].lower() if len(cells) > 1 and cells[1] else ""
        for tag in row_tags:
            if tag in rows:
                fail("log tags: docs/operations.md has two rows for %s" % tag)
            rows[tag] = level
            if tag not in tags:
                fail("log tags: docs/operations.md has a row for %s, which jr_log_tags.h does "
                     "not register" % tag)
            elif level != LEVEL_WORDS[tags[tag]]:
                fail("log tags: docs/operations.md gives %s the level '%s', jr_log_tags.h %s "
                     "(write '%s')" % (tag, cells[1], tags[tag], LEVEL_WORDS[tags[tag]]))
    for tag in tags:
        if tag not in rows:
            fail("log tags: %s has no row in the Logs table of docs/operations.md" % tag)


def main():
    tags = registry()
    messages = scan_code(tags)
    scan_tests(tags)
    scan_doc(tags)
    for tag in tags:
        found = messages.get(tag)
        if not found:
            fail("log tags: %s is registered but never logged" % tag)
        elif len(found) > 1:
            fail("log tags: %s is logged with %d different messages (one message per tag): %s"
                 % (tag, len(found), "; ".join("%s at %s" % (f, ", ".join(w))
                                                for f, w in sorted(found.items()))))
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    sites = sum(len(w) for f in messages.values() for w in f.values())
    print("log tags: %d registered, each logged with one message (%d call sites) and "
          "documented" % (len(tags), sites))
    return 0


if __name__ == "__main__":
    sys.exit(main())
