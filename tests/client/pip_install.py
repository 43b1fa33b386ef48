"""The client installs with pip and works installed, outside the source tree.

Copies client/python (pip builds in place, and a source tree may be
read-only), installs it into a fresh virtual environment with the system's
pip and setuptools (no network: --no-index --no-build-isolation), and runs a
session from the installed package against the daemon.
"""

import os
import shutil
import subprocess
import tempfile
import textwrap

from clientlib import CLIENT, SYSTEM_PYTHON, Daemon, Tap, job

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 3
tap = Tap(plan=CASES)
if subprocess.call([SYSTEM_PYTHON, "-c", "import setuptools, wheel, pip"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL) != 0:
    tap.skip_all("needs Debian's python3-pip, python3-setuptools and python3-wheel")
work = tempfile.mkdtemp(prefix="dlprof-install-")
venv = os.path.join(work, "venv")
python = os.path.join(venv, "bin", "python")


def run(args, **kw):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(kw.pop("env", {}))
    return subprocess.run(args, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=300, **kw)


@tap.test("pip installs ./client/python into a virtual environment")
def _():
    src = os.path.join(work, "src")
    shutil.copytree(CLIENT, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    # A distcheck source tree is read-only, and copytree keeps modes.
    for root, dirs, files in os.walk(src):
        for name in dirs + files + ["."]:
            path = os.path.join(root, name)
            os.chmod(path, os.stat(path).st_mode | 0o200)
    p = run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", "--system-site-packages", venv])
    assert p.returncode == 0, p.stdout.decode()
    p = run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps", src])
    assert p.returncode == 0, p.stdout.decode()


@tap.test("the installed package is the one imported, and a session works from it")
def _():
    with Daemon() as d:
        script = textwrap.dedent("""
            import dlprof, os, sys
            assert os.path.realpath(dlprof.__file__).startswith(os.path.realpath(sys.prefix)), dlprof.__file__
            # The zero-touch bootstrap is installed with the package.
            assert os.path.isfile(os.path.join(os.path.dirname(dlprof.__file__), "_boot", "sitecustomize.py"))
            with dlprof.session(workload="installed") as s:
                s.step(samples=1)
                print(s.job_id)
        """)
        p = run([python, "-c", script], env={"DLPROF_URL": d.url})
        out = p.stdout.decode()
        assert p.returncode == 0, out
        jid = int(out.strip().splitlines()[-1])
        j = job(d, jid)
        assert j["workload"] == "installed" and j["state"] == "ended", j


shutil.rmtree(work, ignore_errors=True)
tap.done()
