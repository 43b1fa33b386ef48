"""What each capability of the systemd unit buys the sampler.

The unit runs the daemon as an unprivileged user with CAP_PERFMON and
CAP_SYS_PTRACE and ProtectProc=invisible (a /proc mounted with
hidepid=invisible).  This test runs the built daemon the same way, as
nobody through setpriv (ambient capabilities, bounding set cut to them),
against "jobs" of another uid placed in a Slurm-style cgroup
(.../uid_U/job_N/step_0), and checks:

- with the unit's capabilities, another user's job is found and sampled
  with perf counters, also through a hidepid=invisible /proc;
- without CAP_SYS_PTRACE, hidepid hides that job (why the unit keeps it);
- without CAP_PERFMON (and CAP_SYS_PTRACE), the job is found but gets no
  perf counters, while the daemon's own user's job does (why CAP_PERFMON);
- a job known only by SLURM_JOB_ID in its environment (mode 0400) stays
  unknown: the unit withholds CAP_DAC_READ_SEARCH, as its comment says.

Needs root (setpriv, mounts, cgroups); skipped otherwise.  TAP output.
"""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import Daemon, Tap, wait_until  # noqa: E402

OTHER_UID = 43210                  # a uid with no account: "another user"
UNIT_CAPS = "+perfmon,+sys_ptrace"  # as in systemd/dlprofd.service.in


# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 10


class UnprivilegedDaemon(Daemon):
    """The built daemon run as nobody with the given capabilities ("" for none)."""

    def __init__(self, caps, proc_root=None):
        args = ["--interval", "0.2"] + (["--proc-root", proc_root] if proc_root else [])
        super().__init__(args=args)
        self.caps = caps
        nobody = pwd.getpwnam("nobody")
        self.ids = (nobody.pw_uid, nobody.pw_gid)
        os.chown(self.workdir, *self.ids)

    def command(self):
        uid, gid = self.ids
        prefix = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups"]
        if self.caps:
            prefix += ["--inh-caps=" + self.caps, "--ambient-caps=" + self.caps,
                       "--bounding-set=-all," + self.caps]
        else:
            prefix += ["--inh-caps=-all", "--bounding-set=-all"]
        return prefix + ["--"] + super().command()


def start_job(uid, gid, env=()):
    """A long sleep as uid (gid) with only env in its environment."""
    return subprocess.Popen(["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups",
                             "--", "env", "-i"] + list(env) + ["sleep", "300"])


class SlurmCgroup:
    """A Slurm-style cgroup .../uid_U/job_N/step_0 in a writable hierarchy."""

    ROOTS = ("/sys/fs/cgroup/freezer", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup")

    def __init__(self, uid, job):
        self.top = None
        for root in self.ROOTS:
            if os.path.exists(os.path.join(root, "cgroup.procs")):
                top = os.path.join(root, "dlprof-test-%d" % os.getpid())
                path = os.path.join(top, "uid_%d" % uid, "job_%d" % job, "step_0")
                try:
                    os.makedirs(path)
                except OSError:
                    continue
                self.top, self.path = top, path
                return

    def add(self, pid):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def remove(self):
        if self.top:
            for d, _, _ in sorted(os.walk(self.top), key=lambda t: -len(t[0])):
                try:
                    os.rmdir(d)
                except OSError:
                    pass


def running(d, ext):
    _, _, body = d.get("/api/v1/jobs?state=running")
    jobs = body["jobs"] if isinstance(body, dict) else body
    return [j for j in jobs if j.get("external_id") == ext]


def perf_keys(d, ext):
    jobs = running(d, ext)
    return [k for k in (jobs[0].get("latest") or {}) if k.startswith("perf.")] if jobs else []


def perf_available(d):
    def probed():
        _, _, node = d.get("/api/v1/node")
        cols = node.get("collectors", [])
        return None if any(c.get("status") == "starting" for c in cols) else cols
    cols = wait_until(probed, timeout=60)   # the sampler probes collectors after start
    return any(c.get("name") == "perf" and c.get("status") == "available" for c in cols)


def main():
    tap = Tap(plan=CASES)
    if os.geteuid() != 0:
        tap.skip_all("needs root (setpriv, a proc mount, cgroups)")
    if not shutil.which("setpriv"):
        tap.skip_all("no setpriv (util-linux)")
    base = 900000 + os.getpid() % 10000 * 10       # Slurm ids no real job here has
    cg_job, own_job, env_job = base + 1, base + 2, base + 3
    cgroup = SlurmCgroup(OTHER_UID, cg_job)
    if not cgroup.top:
        tap.skip_all("no writable cgroup hierarchy for a Slurm-style job cgroup")
    nobody = pwd.getpwnam("nobody")
    hproc = tempfile.mkdtemp(prefix="dlprof-hidepid-")
    mounted = subprocess.run(["mount", "-t", "proc", "-o", "hidepid=invisible", "proc", hproc],
                             capture_output=True).returncode == 0
    jobs = []
    try:
        other = start_job(OTHER_UID, OTHER_UID)
        jobs.append(other)
        cgroup.add(other.pid)
        jobs.append(start_job(nobody.pw_uid, nobody.pw_gid, ["SLURM_JOB_ID=%d" % own_job]))
        jobs.append(start_job(OTHER_UID, OTHER_UID, ["SLURM_JOB_ID=%d" % env_job]))
        run_cases(tap, cg_job, own_job, env_job, hproc if mounted else None)
    finally:
        for p in jobs:
            p.kill()
            p.wait()
        if mounted:
            subprocess.run(["umount", hproc])
        os.rmdir(hproc)
        time.sleep(0.1)       # the killed sleeps leave their cgroup
        cgroup.remove()
    tap.done()


def run_cases(tap, cg_job, own_job, env_job, hproc):
    other, own, by_env = "slurm:%d" % cg_job, "slurm:%d" % own_job, "slurm:%d" % env_job

    with UnprivilegedDaemon(UNIT_CAPS) as d:
        @tap.test("unit capabilities: another user's Slurm job is found through its cgroup")
        def _():
            wait_until(lambda: running(d, other), timeout=30)

        if perf_available(d):
            @tap.test("unit capabilities: that job is sampled with perf counters")
            def _():
                wait_until(lambda: perf_keys(d, other), timeout=30)
        else:
            tap.skip("unit capabilities: perf counters", "perf collector unavailable here")

        @tap.test("unit capabilities: a job known only by its 0400 environ stays unknown")
        def _():
            wait_until(lambda: running(d, own), timeout=30)   # the daemon has scanned /proc
            time.sleep(0.5)
            assert running(d, by_env) == [], running(d, by_env)

    if hproc:
        with UnprivilegedDaemon(UNIT_CAPS, proc_root=hproc) as d:
            @tap.test("ProtectProc=invisible with CAP_SYS_PTRACE: the job stays visible")
            def _():
                wait_until(lambda: running(d, other), timeout=30)

        with UnprivilegedDaemon("+perfmon", proc_root=hproc) as d:
            @tap.test("ProtectProc=invisible without CAP_SYS_PTRACE: another user's job vanishes")
            def _():
                wait_until(lambda: running(d, own), timeout=30)
                time.sleep(0.5)
                assert running(d, other) == [], running(d, other)
    else:
        tap.skip("ProtectProc=invisible with CAP_SYS_PTRACE", "cannot mount proc with hidepid")
        tap.skip("ProtectProc=invisible without CAP_SYS_PTRACE", "cannot mount proc with hidepid")

    with UnprivilegedDaemon("") as d:
        if not perf_available(d):
            tap.skip("without capabilities: no perf counters", "perf collector unavailable here")
            return

        @tap.test("without capabilities: another user's job gets no perf counters, its own does")
        def _():
            wait_until(lambda: running(d, other), timeout=30)
            wait_until(lambda: perf_keys(d, own), timeout=30)
            time.sleep(0.5)
            assert perf_keys(d, other) == [], perf_keys(d, other)


if __name__ == "__main__":
    main()
