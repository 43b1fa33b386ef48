"""docs/ARCHITECTURE.md stays a true map of the code.

Read from the sources themselves: every key of the configuration table
(daemon/config.c) is a row of the document's key table, with the same
answer to whether SIGHUP changes it; every row of the route table
(daemon/routes.c) is a row of its route table, with the same access;
every part daemon_start (daemon/main.c) starts or hooks up is named in the
"Start order" paragraph, the starts in the order main.c runs them; and
every module of base/, collectors/ and daemon/ is named.  A row for
something the code no longer has fails too.  The parsers refuse to find
too little, so a reformatted table fails here rather than checking
nothing.  TAP output.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import SRCDIR, Tap  # noqa: E402

tap = Tap()
top = os.path.realpath(SRCDIR)


def read(rel):
    with open(os.path.join(top, rel)) as f:
        return f.read()


DOC = read("docs/ARCHITECTURE.md")


def doc_rows(first_cell):
    """The document's table rows whose first cell matches first_cell (a regex): {match: [cells]}."""
    rows = {}
    for line in DOC.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(first_cell, cells[0])
        if m:
            rows[m.group(1)] = cells
    return rows


def config_keys():
    """{key: reloadable} from the keys[] table of daemon/config.c."""
    src = read("daemon/config.c")
    table = re.search(r"static const struct key keys\[\] = \{(.*?)\n\};", src, re.S)
    assert table, "daemon/config.c: no keys[] table"
    keys = dict((name, flag == "true") for name, flag in re.findall(
        r'^\s*\{"([a-z0-9_]+)",\s*KEY_[A-Z]+,.*,\s*(true|false),\s*$', table.group(1), re.M))
    assert len(keys) >= 40, "daemon/config.c: only %d keys parsed" % len(keys)
    return keys


def routes():
    """[(method, path, access)] from daemon/routes.c, in order."""
    rows = re.findall(r'\{"([A-Z]+)",\s*"([^"]+)",\s*[a-z_0-9]+,\s*ACCESS_([A-Z]+)\}', read("daemon/routes.c"))
    assert len(rows) >= 10, "daemon/routes.c: only %d routes parsed" % len(rows)
    return [(m, p, a.lower()) for m, p, a in rows]


def start_steps():
    """What daemon_start calls to start a part (*_open, *_new, *_start, *_probe), in order, and the hooks it sets."""
    src = read("daemon/main.c")
    body = re.search(r"\nstatic int daemon_start\(struct daemon \*d\)\n\{(.*?)\n\}\n", src, re.S)
    assert body, "daemon/main.c: no daemon_start"
    calls = re.findall(r"\b([a-z][a-z0-9_]*)\(", body.group(1))
    starts, hooks = [], []
    for c in calls:
        if re.fullmatch(r"[a-z0-9_]+_(open|new|start|probe)", c) and c not in starts:
            starts.append(c)
        elif re.fullmatch(r"[a-z0-9_]+_set_[a-z0-9_]+", c) and c not in hooks:
            hooks.append(c)
    assert len(starts) >= 8, "daemon/main.c: only %s found in daemon_start" % starts
    return starts, hooks


def start_order_text():
    m = re.search(r"\nStart order \(`daemon_start`.*?(?=\n\n)", DOC, re.S)
    assert m, "no \"Start order (`daemon_start`...\" paragraph"
    return m.group(0)


def modules():
    """The stem of every .c and .h of base/, collectors/ and daemon/; generated ones (an in-tree build's) aside."""
    built = set()
    for mk in ("sql/local.mk",):
        for line in read(mk).splitlines():
            if line.startswith("BUILT_SOURCES"):
                built.update(line.split("=", 1)[1].split())
    stems = set()
    for d in ("base", "collectors", "daemon"):
        for f in os.listdir(os.path.join(top, d)):
            if f.endswith((".c", ".h")) and "%s/%s" % (d, f) not in built:
                stems.add((d, f))
    return stems


@tap.test("every configuration key is in the key table, reloadable as config.c says")
def _():
    rows = doc_rows(r"`([a-z0-9_]+)`")
    bad = []
    for key, reloadable in sorted(config_keys().items()):
        if key not in rows:
            bad.append("%s: no row" % key)
        elif rows[key][-1] != ("reload" if reloadable else "restart"):
            bad.append("%s: says %r, config.c says %s" % (key, rows[key][-1], "reload" if reloadable else "restart"))
    assert not bad, bad


@tap.test("the key table names no key config.c lacks")
def _():
    keys = config_keys()
    stale = [k for k, cells in doc_rows(r"`([a-z0-9_]+)`").items()
             if len(cells) == 3 and cells[-1] in ("reload", "restart") and k not in keys]
    assert not stale, stale


@tap.test("every route is in the route table, with its access")
def _():
    table = {}
    for line in DOC.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 5 and re.fullmatch(r"[A-Z]+", cells[0]) and cells[1].startswith("`/"):
            table[(cells[0], cells[1].strip("`"))] = cells[4]
    assert table, "no route table"
    bad = []
    for method, path, access in routes():
        if (method, path) not in table:
            bad.append("%s %s: no row" % (method, path))
        elif table[(method, path)] != access:
            bad.append("%s %s: says %r, routes.c says %s" % (method, path, table[(method, path)], access))
    stale = sorted(set(table) - set((m, p) for m, p, _ in routes()))
    assert not bad and not stale, (bad, ["%s %s: not in routes.c" % r for r in stale])


@tap.test("the start order names every part daemon_start starts, in its order, and every hook it sets")
def _():
    starts, hooks = start_steps()
    text = start_order_text()
    places = []
    for step in starts:
        i = text.find("`%s`" % step)
        assert i >= 0, "start step %s is not in the Start order paragraph" % step
        places.append((i, step))
    assert places == sorted(places), "main.c starts %s; the document says %s" % (
        starts, [s for _, s in sorted(places)])
    missing = [h for h in hooks if "`%s`" % h not in text]
    assert not missing, "hooks set in daemon_start but not named: %s" % missing


@tap.test("every module of base/, collectors/ and daemon/ is named (its .c or its .h)")
def _():
    missing = sorted("%s/%s" % (d, f) for d, f in modules()
                     if not re.search(r"`%s\.[ch]`" % re.escape(f[:-2]), DOC))
    assert not missing, missing


@tap.test("the document names no module the tree lacks")
def _():
    have = set(f[:-2] for _, f in modules())
    named = set(re.findall(r"`([a-z][a-z0-9_]*)\.[ch]`", DOC))
    # Files of other folders the document names too (tools/, contrib/, tests/, bench/).
    elsewhere = set()
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if x not in ("build", "_build", "deb-build", "node_modules", ".git", "autom4te.cache")
                   and not x.startswith("dlprofd-")]
        elsewhere.update(f[:-2] for f in files if f.endswith((".c", ".h")))
    stale = sorted(n for n in named if n not in have and n not in elsewhere)
    assert not stale, stale


tap.done()
