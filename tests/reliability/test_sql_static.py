"""No SQL built from input, checked on the sources: only daemon/store*.c
call sqlite3_*; every statement they prepare through store_stmt() is a
static string constant of their own file; nothing formats SQL text
(sqlite3_mprintf and friends, or printf into a statement buffer) but the
one integer of a PRAGMA, which takes no parameter (store_exec_pragma,
given a constant "PRAGMA name=%lld" of its caller's file), so a value
from a request can only ever reach SQLite as a bound parameter.
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
    # The name may open its line (the return type on the line above) or follow the return type.
    heads = list(re.finditer(r"^(?:\w[^;{}()]*?\b)?(\w+)\(([^)]*)\)\s*\{", c[:pos], re.M))
    if not heads:
        return None, []
    m = heads[-1]
    return m.group(1), [re.findall(r"(\w+)\s*$", a.strip())[0] for a in m.group(2).split(",") if a.strip()]


def ternary_results(expr):
    """The values a chain c1 ? A : c2 ? B : C can take (A, B, C), or None when expr is no such chain."""
    if "?" not in expr:
        return None
    out = []
    for part in expr.split("?")[1:]:
        out.append(part.split(":")[0].strip())
    out.append(expr.rsplit(":", 1)[1].strip())
    return out


FILES = {p: code(t) for p, t in store_files.items()}
CONSTS = {p: set(re.findall(r"static const char (\w+)\[\]\s*=", t)) for p, t in store_files.items()}


def calls_of(fn):
    """(file, position, arguments) of every call of fn in the store files; a header line is not a call."""
    for p, c in FILES.items():
        for m in re.finditer(r"\b%s\(" % fn, c):
            if re.match(r"^(\w[^;{}]*)?$", c[c.rfind("\n", 0, m.start()) + 1:m.start()]):
                continue   # its definition or declaration
            yield p, m.start(), split_args(c[m.end():])


def sql_argument_ok(p, pos, arg, depth=0):
    """Whether arg, at pos in store file p, can only be one of the static SQL constants of the store files."""
    c, consts = FILES[p], CONSTS[p]
    if depth > 6:
        return False
    if arg in consts:
        return True
    results = ternary_results(arg)
    if results:
        return all(sql_argument_ok(p, pos, x, depth + 1) for x in results)
    # table[i]: a static table of the file's constants.
    table = re.fullmatch(r"(\w+)\[[^\]]*\]", arg)
    if table:
        rows = re.search(r"static const char \*const %s\[\]\s*=\s*\{([^}]*)\}" % table.group(1), c)
        return bool(rows) and all(x.strip() in consts for x in rows.group(1).split(",") if x.strip())
    fn, params = enclosing_function(c, pos)
    body = c[c.rfind(fn + "(", 0, pos) if fn else 0:pos]
    # v->field: a struct of this file whose every initializer sets field from what is checked here.
    member = re.fullmatch(r"(\w+)->(\w+)", arg)
    if member:
        decl = re.search(r"struct (\w+) \*%s\s*=" % member.group(1), body)
        sdef = decl and re.search(r"struct %s \{([^}]*)\}" % decl.group(1), c)
        if not sdef:
            return False
        fields = [f for d in sdef.group(1).split(";") for f in re.findall(r"\**(\w+)\s*(?:,|$)", d.strip())]
        if member.group(2) not in fields:
            return False
        k = fields.index(member.group(2))
        inits = list(re.finditer(r"struct %s \w+ = \{([^}]*)\}" % decl.group(1), c))
        return bool(inits) and all(sql_argument_ok(p, m.start(), split_args(m.group(1) + ")")[k], depth + 1)
                                   for m in inits)
    if not re.match(r"^\w+$", arg):
        return False
    local = re.search(r"const char \*%s\s*=([^;]*);" % arg, body)
    if local:
        return sql_argument_ok(p, pos, local.group(1).strip(), depth + 1)
    if arg in params:
        # Every call of the function, in any store file, must pass a constant there.
        i = params.index(arg)
        seen = False
        for q, at, args in calls_of(fn):
            if len(args) <= i:
                continue
            seen = True
            if not sql_argument_ok(q, at, args[i], depth + 1):
                return False
        return seen
    return False


@tap.test("store_stmt() is only given static SQL constants of the same file (or variables only ever set to them)")
def _():
    bad = []
    for p, c in FILES.items():
        for m in re.finditer(r"\bstore_stmt\(", c):
            args = split_args(c[m.end():])
            if args[0].startswith("struct store_conn"):
                continue   # its definition
            if not sql_argument_ok(p, m.start(), args[1]):
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


def pragma_formats():
    """The format each call of store_exec_pragma() passes, with its file: a PRAGMA takes no parameter."""
    out = []
    for p, t in store_files.items():
        c = code(t)
        for m in re.finditer(r"\bstore_exec_pragma\(", c):
            args = split_args(c[m.end():])
            if not args[0].startswith("struct store_conn"):
                out.append((p, args[1]))
    return out


@tap.test("sqlite3_exec() runs only constant text, the compiled-in migrations, or a PRAGMA given one integer")
def _():
    bad = []
    for p, t in store_files.items():
        consts = set(re.findall(r"static const char (\w+)\[\]\s*=", t))
        for arg in re.findall(r"sqlite3_exec\(\s*[^,]+,\s*([^,]+),", t):
            arg = arg.strip()
            if not (arg.startswith('"') or arg in ("m->sql", "pragmas", "pragma") or arg in consts
                    or (arg == "sql" and "int store_exec_pragma(" in t)):
                bad.append((p, arg))
    # store_exec_pragma() formats its one integer into a constant PRAGMA of its caller's file.
    for p, fmt in pragma_formats():
        body = re.search(r"static const char %s\[\]\s*=\s*(\"[^\"]*\")" % re.escape(fmt), store_files[p])
        if not body or not re.fullmatch(r'"PRAGMA [a-z_]+(=|\()%lld\)?"', body.group(1)):
            bad.append((p, fmt, body.group(1) if body else "not a static constant of the file"))
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
