"""The python3-dlprof package: built by debian/rules, installed, used by a job.

Builds the arch-independent package the way `make deb` does
(dpkg-buildpackage, here with -A: only python3-dlprof) from a scratch copy
of debian/ and the client's sources, checks what it ships, installs it on
this node (apt-get with the .deb; removed again at the end) and runs a tiny
job under /usr/bin/python3, outside the source tree and without PYTHONPATH,
that imports dlprof from /usr/lib/python3/dist-packages and reports a step
to the built daemon.

Where installing is not possible (not root, or python3-dlprof already
installed by someone else) the package is unpacked into a scratch root
with dpkg-deb and imported from there, and the test names say so.
Skipped without debhelper (scripts/deps.sh installs it).  TAP output.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import SRCDIR, Daemon, Tap, wait_until  # noqa: E402

PACKAGE = "python3-dlprof"
SITE = "/usr/lib/python3/dist-packages"

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 6
tap = Tap(plan=CASES)


def installed(name):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() == "install ok installed"


def apt(*args):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=300"] + list(args),
                          capture_output=True, text=True, env=env, timeout=600)


if not shutil.which("dh") or not shutil.which("dpkg-buildpackage"):
    tap.skip_all("no debhelper/dpkg-dev to build the package (Debian packages debhelper, dh-python)")

work = tempfile.mkdtemp(prefix="dlprof-pydeb-")
os.chmod(work, 0o755)
src = os.path.join(work, "src")
deb = os.path.join(work, "%s_all.deb" % PACKAGE)
may_install = os.geteuid() == 0 and shutil.which("apt-get") and not installed(PACKAGE)
we_installed = False
try:
    @tap.test("debian/rules builds python3-dlprof (dpkg-buildpackage -A)")
    def _():
        shutil.copytree(os.path.join(SRCDIR, "debian"), os.path.join(src, "debian"))
        shutil.copytree(os.path.join(SRCDIR, "client", "python", "dlprof"),
                        os.path.join(src, "client", "python", "dlprof"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        # A distcheck tree is read-only and copytree keeps modes.
        for d, dirs, files in os.walk(src):
            for name in dirs + files + ["."]:
                path = os.path.join(d, name)
                os.chmod(path, os.stat(path).st_mode | 0o200)
        p = subprocess.run(["dpkg-buildpackage", "-A", "-us", "-uc"], cwd=src, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
        built = [f for f in os.listdir(work) if f.startswith(PACKAGE + "_") and f.endswith("_all.deb")]
        assert len(built) == 1, os.listdir(work)
        os.rename(os.path.join(work, built[0]), deb)

    @tap.test("it ships every module of the client under %s, and depends on python3" % SITE)
    def _():
        listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
        shipped = sorted(line.split()[-1][len("." + SITE + "/"):] for line in listing.splitlines()
                         if line.split()[-1].endswith(".py"))
        top = os.path.join(SRCDIR, "client", "python")
        want = sorted(os.path.relpath(os.path.join(d, f), top)
                      for d, _, files in os.walk(os.path.join(top, "dlprof")) for f in files if f.endswith(".py"))
        assert shipped == want, (shipped, want)
        depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True, text=True,
                                 check=True).stdout
        assert "python3" in depends, depends

    if may_install:
        how = "installed"

        @tap.test("apt-get installs the .deb on this node")
        def _():
            global we_installed
            p = apt("install", "--no-install-recommends", deb)
            we_installed = installed(PACKAGE)
            assert p.returncode == 0 and we_installed, (p.stdout + p.stderr)[-2000:]
        root, site = "/", SITE
    else:
        how = "unpacked into a scratch root (%s)" % (
            "not root" if os.geteuid() != 0 else "python3-dlprof is already installed here")
        root = os.path.join(work, "root")
        site = os.path.join(root, SITE.lstrip("/"))
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)

    @tap.test("a job imports dlprof from the package (%s) and reports a step" % how)
    def _():
        with Daemon() as d:
            script = textwrap.dedent("""
                import os, sys
                import dlprof
                print(os.path.dirname(os.path.dirname(os.path.realpath(dlprof.__file__))))
                with dlprof.session(workload="deb-installed", interval=3600) as s:
                    s.step(samples=4, loss=0.5)
                    assert s.flush()
                    print(s.job_id)
            """)
            env = {"PATH": "/usr/bin:/bin", "DLPROF_URL": d.url}
            if root != "/":
                env["PYTHONPATH"] = site   # only where the package could not be installed
            p = subprocess.run(["/usr/bin/python3", "-c", script], cwd="/", env=env, capture_output=True,
                               text=True, timeout=120)
            assert p.returncode == 0, p.stderr
            where, job_id = p.stdout.split()
            assert where == os.path.realpath(site), (where, site)
            j = wait_until(lambda: d.get("/api/v1/jobs/%s" % job_id)[2], timeout=10)
            assert j["workload"] == "deb-installed", j
finally:
    if we_installed:
        p = apt("purge", PACKAGE)
        tap.ok(p.returncode == 0 and not installed(PACKAGE), "the package is purged again",
               (p.stdout + p.stderr)[-2000:])
    shutil.rmtree(work, ignore_errors=True)

tap.done()
