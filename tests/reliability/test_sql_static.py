"""No SQL built from input, checked on the sources: only daemon/store*.c
call sqlite3_*; every statement they prepare through store_stmt() is a
static string constant of their own file; nothing formats SQL text
(sqlite3_mprintf and friends, or printf into a statement buffer), so a
value from a request can only ever reach SQLite as a bound parameter.
Likewise for PostgreSQL (the cluster store): only daemon/cluster_pg.c calls
libpq, and every statement cluster*.c send is a constant."""

import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SRCDIR, Tap  # noqa: E402

tap = Tap()
sources = sorted(glob.glob(os.path.join(SRCDIR, "daemon", "*.c")) + glob.glob(os.path.join(SRCDIR, "collectors", "*.c")))
text = {os.path.relpath(p, SRCDIR): open(p, encoding="utf-8").read() for p in sources}
store_files = {p: t for p, t in text.items() if re.match(r"daemon/store[a-z_]*\.c$", p)}


def code(t):
    """The text without comments and string literals, so prose cannot trip the checks."""
    t = re.sub(r"/\*.*?\*/", " ", t, flags=re.S)
    t = re.sub(r"//[^\n]*", " ", t)
    return re.sub(r'"(\\.|[^"\\])*"', '""', t)


@tap.test("only daemon/store*.c call sqlite3_* (%d files checked)" % len(text))
def _():
    bad = [p for p, t in text.items() if p not in store_files and re.search(r"\bsqlite3_\w+\s*\(", code(t))]
    assert not bad, bad


def split_args(text):
    """Top-level comma-separated arguments of a call's text (after its '(')."""
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return args + [cur.strip()]


def enclosing_function(c, pos):
    """(name, parameter names) of the function whose body holds position pos."""
    heads = list(re.finditer(r"^\w[^;{}()]*?\b(\w+)\(([^)]*)\)\s*\{", c[:pos], re.M))
    if not heads:
        return None, []
    m = heads[-1]
    return m.group(1), [re.findall(r"(\w+)\s*$", a.strip())[0] for a in m.group(2).split(",") if a.strip()]


def constant_expr(expr, consts):
    """An expression that can only be one of the constants: names, ?:, strcmp() and enum tests."""
    expr = re.sub(r"strcmp\([^()]*\)\s*[=!]=\s*0", " ", expr)
    expr = re.sub(r"\b\w+\s*[=!]=\s*[A-Z][A-Z0-9_]*\b", " ", expr)
    names = set(re.findall(r"\b[A-Za-z_]\w*\b", expr))
    return bool(names) and names <= consts


def sql_argument_ok(c, pos, arg, consts, depth=0):
    if arg in consts:
        return True
    if depth > 3 or not re.match(r"^\w+$", arg):
        return False
    fn, params = enclosing_function(c, pos)
    local = re.search(r"const char \*%s\s*=([^;]*);" % arg, c[c.rfind(fn + "(", 0, pos) if fn else 0:pos])
    if local:
        return constant_expr(local.group(1), consts)
    if arg in params:
        i = params.index(arg)
        # Every call of the function must pass a constant there; its header line is not a call,
        # whether the return type shares the line or stands on the line above.
        calls = [m for m in re.finditer(r"\b%s\(" % fn, c)
                 if not re.match(r"^(\w[^;{}]*)?$", c[c.rfind("\n", 0, m.start()) + 1:m.start()])]
        seen = False
        for m in calls:
            args = split_args(c[m.end():])
            if len(args) <= i:
                continue
            seen = True
            if not sql_argument_ok(c, m.start(), args[i], consts, depth + 1):
                return False
        return seen
    return False


# store.c's helpers that prepare the SQL they are given (store_internal.h): their
# callers' SQL is checked as store_stmt's is, and what they hand on is not.
SQL_HELPERS = ("store_stmt_id", "store_run_id")


@tap.test("store_stmt() is only given static SQL constants of the same file (or variables only ever set to them)")
def _():
    bad = []
    for p, t in store_files.items():
        consts = set(re.findall(r"static const char (\w+)\[\]\s*=", t))
        c = code(t)
        for m in re.finditer(r"\b(?:store_stmt|%s)\(" % "|".join(SQL_HELPERS), c):
            args = split_args(c[m.end():])
            if args[0].startswith("struct store_conn"):
                continue   # its definition
            if p == "daemon/store.c" and enclosing_function(c, m.start())[0] in SQL_HELPERS:
                continue   # a helper handing on its caller's SQL
            if not sql_argument_ok(c, m.start(), args[1], consts):
                bad.append((p, args[1], c[:m.start()].count("\n") + 1))
    assert not bad, bad


@tap.test("no SQL text is formatted at run time (no sqlite3_mprintf, no printf into SQL)")
def _():
    bad = []
    for p, t in store_files.items():
        c = code(t)
        for m in re.finditer(r"\b(sqlite3_v?mprintf|sqlite3_v?snprintf|sqlite3_str_\w+)\s*\(", c):
            bad.append((p, m.group(1)))
        for m in re.finditer(r"snprintf\(\s*(\w+)\s*,[^;]*\"[^\"]*\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA)\b", t):
            if not (p == "daemon/store.c" and m.group(2) == "PRAGMA" and "user_version = %d" in t):
                bad.append((p, m.group(0)[:80]))
    assert not bad, bad


@tap.test("sqlite3_exec() runs only constant text or the compiled-in migrations")
def _():
    bad = []
    for p, t in store_files.items():
        for arg in re.findall(r"sqlite3_exec\(\s*[^,]+,\s*([^,]+),", t):
            arg = arg.strip()
            if not (arg.startswith('"') or arg in ("m->sql", "pragmas", "pragma")):
                bad.append((p, arg))
    assert not bad, bad


@tap.test("libpq (the cluster store) is called only from daemon/cluster_pg.c, which runs what cluster*.c hand it")
def _():
    bad = [p for p, t in text.items() if p != "daemon/cluster_pg.c"
           and re.search(r"\bPQ(exec|sendQuery|connect|prepare)\w*\s*\(", code(t))]
    assert not bad, bad


@tap.test("cluster*.c send values to PostgreSQL only as parameters: every query is a constant")
def _():
    bad = []
    consts = set(re.findall(r"const char (\w+)\[\]\s*=", text.get("daemon/cluster_sql.c", "")))
    for p, t in text.items():
        if not re.match(r"daemon/cluster[a-z_]*\.c$", p):
            continue
        c = code(t)
        # The source itself (string literals kept), without comments.
        src = re.sub(r"/\*.*?\*/", " ", t, flags=re.S)
        for m in re.finditer(r"\bcpg_query\(", src):
            args = split_args(src[m.end():])
            if args[0].startswith("struct cluster_pg"):
                continue   # its definition
            raw = args[1]
            if not (raw in consts or re.match(r'^"[^"%]*"(\s*CHANNEL)?$', raw) or (p == "daemon/cluster_pg.c" and raw == "sql")):
                bad.append((p, raw))
        if re.search(r"\bPQescape\w*\(", c):
            bad.append((p, "PQescape*"))
    assert consts >= {"cluster_sql_push", "cluster_sql_pull", "cluster_sql_view"}, consts
    assert not bad, bad


tap.done()
