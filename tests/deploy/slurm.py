"""The Slurm integration in a real one-node Slurm cluster on 127.0.0.1.

Starts munged, slurmctld and slurmd (Debian's packages; installed with
apt-get when missing) in a temporary directory, with the built dlprofd on
an ephemeral port, and runs sbatch/srun jobs:

1. with the TaskProlog and Epilog hooks: the job sees OMP_NUM_THREADS equal
   to the daemon's recommendation for its workload (from --comment, from
   DLPROF_WORKLOAD, from the job name), the daemon records the job under
   slurm:ID and the Epilog ends it with the job's exit code;
2. with the SPANK plugin: the same for --dlprof=recommend, the tuner's
   registration config for --dlprof=tune, nothing for --dlprof=off, and a
   bad --dlprof value refused at submission;
3. with the daemon stopped, and with a daemon that accepts connections but
   never answers: jobs run and succeed as if dlprof were not there.

Everything it starts is stopped at the end.  Needs root (slurmd runs jobs
as their users); otherwise the whole file is skipped.  TAP output.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import BUILDDIR, SRCDIR, Daemon, Tap, wait_until  # noqa: E402

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
PROGRAMS = ["slurmctld", "slurmd", "munged", "sbatch", "srun", "sinfo", "squeue", "scontrol"]
NODE = "dlproftest"


# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run Slurm reports each of them skipped.
CASES = 19


def have_programs():
    return all(shutil.which(p) or os.path.exists("/usr/sbin/" + p) for p in PROGRAMS)


def ensure_slurm():
    """Installs Debian's Slurm and munge when missing; returns a reason when it cannot."""
    if have_programs():
        return None
    if os.environ.get("DLPROF_NO_APT"):
        return "Slurm is not installed and DLPROF_NO_APT is set"
    if not shutil.which("apt-get"):
        return "Slurm is not installed and there is no apt-get"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends"] + PACKAGES,
                       capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0 or not have_programs():
        return "apt-get install %s failed: %s" % (" ".join(PACKAGES), (p.stderr or p.stdout)[-300:])
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def sbin(name):
    return shutil.which(name) or "/usr/sbin/" + name


class Cluster:
    """munged + slurmctld + slurmd in one directory, in the foreground (we own them)."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        self.munged = None
        self.env = dict(os.environ, SLURM_CONF=os.path.join(root, "slurm.conf"))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "DLPROF_WORKLOAD", "DLPROF_JOB",
                     "DLPROF_MODE", "DLPROF_SLURM", "DLPROF_URL", "DLPROF_SOCKET"):
            self.env.pop(name, None)
        for d in ("state", "spool", "log", "out", "munge"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        self.ports = (free_port(), free_port())

    def start_munge(self):
        m = os.path.join(self.root, "munge")
        os.chmod(m, 0o755)   # jobs of any user reach the socket
        key = os.path.join(m, "key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(m, "sock")
        self.munged = subprocess.Popen(
            [sbin("munged"), "--foreground", "--force", "--socket=" + self.munge_socket,
             "--key-file=" + key, "--log-file=" + os.path.join(self.root, "log", "munged.log"),
             "--pid-file=" + os.path.join(m, "pid"), "--seed-file=" + os.path.join(m, "seed")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(self.munge_socket):
            if self.munged.poll() is not None or time.time() > deadline:
                raise RuntimeError("munged did not start: %s" % self.log("munged.log"))
            time.sleep(0.05)

    def write_conf(self, extra):
        r = self.root
        host = socket.gethostname().split(".")[0]
        lines = [
            "ClusterName=dlproftest",
            "SlurmctldHost=%s(127.0.0.1)" % host,
            "SlurmctldPort=%d" % self.ports[0],
            "SlurmdPort=%d" % self.ports[1],
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge",
            "AuthInfo=socket=%s" % self.munge_socket,
            "StateSaveLocation=%s/state" % r, "SlurmdSpoolDir=%s/spool" % r,
            "SlurmctldPidFile=%s/slurmctld.pid" % r, "SlurmdPidFile=%s/slurmd.pid" % r,
            "SlurmctldLogFile=%s/log/slurmctld.log" % r, "SlurmdLogFile=%s/log/slurmd.log" % r,
            "SlurmdDebug=verbose",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "SwitchType=switch/none", "MpiDefault=none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            "ReturnToService=2", "SchedulerType=sched/backfill", "MinJobAge=600",
            "PlugStackConfig=%s/plugstack.conf" % r,
            "NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN"
            % (NODE, host, os.cpu_count() or 1),
            "PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP" % NODE,
        ] + extra
        with open(os.path.join(r, "slurm.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self):
        conf = os.path.join(self.root, "slurm.conf")
        ctld = subprocess.Popen([sbin("slurmctld"), "-D", "-i", "-f", conf], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.procs.append(ctld)
        slurmd = subprocess.Popen([sbin("slurmd"), "-D", "-f", conf, "-N", NODE], env=self.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.procs.append(slurmd)
        deadline = time.time() + 60
        while time.time() < deadline:
            for p in (ctld, slurmd):
                if p.poll() is not None:
                    raise RuntimeError("slurm daemon exited %s:\n%s\n%s" % (
                        p.returncode, self.log("slurmctld.log"), self.log("slurmd.log")))
            p = subprocess.run(["sinfo", "-h", "-n", NODE, "-o", "%T"], env=self.env,
                               capture_output=True, text=True)
            if p.stdout.strip() == "idle":
                return
            time.sleep(0.3)
        raise RuntimeError("node never became idle:\n%s\n%s" % (
            self.log("slurmctld.log")[-2000:], self.log("slurmd.log")[-2000:]))

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        # slurmd leaves slurmstepd processes only while jobs run; none do now.

    def stop_all(self):
        self.stop()
        if self.munged and self.munged.poll() is None:
            self.munged.terminate()
            try:
                self.munged.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.munged.kill()
                self.munged.wait()

    def log(self, name):
        try:
            with open(os.path.join(self.root, "log", name)) as f:
                return f.read()
        except OSError:
            return ""

    def sbatch(self, script, *args, env=None):
        """Submits a batch job and waits for it; returns (job id, exit code, output text).

        Polls the job's state instead of sbatch --wait, which sleeps seconds
        between its own polls."""
        path = os.path.join(self.root, "out", "job-%d.sh" % int(time.time() * 1e6))
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + script + "\n")
        os.chmod(path, 0o755)
        out = self.last_out = path + ".out"
        p = subprocess.run(["sbatch", "--parsable", "-o", out, "-e", out] + list(args) + [path],
                           env=dict(self.env, **(env or {})), capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            return "", p.returncode, p.stdout + p.stderr
        job = p.stdout.strip().split(";")[0]
        rc = self.wait_job(job)
        try:
            with open(out) as f:
                return job, rc, f.read()
        except OSError:
            return job, rc, ""

    def wait_job(self, job, timeout=120):
        """The job's exit code once it has finished."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            p = subprocess.run(["scontrol", "-o", "show", "job", job], env=self.env,
                               capture_output=True, text=True)
            fields = dict(f.split("=", 1) for f in p.stdout.split() if "=" in f)
            if fields.get("JobState") in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"):
                return int(fields.get("ExitCode", "1:0").split(":")[0])
            time.sleep(0.1)
        raise RuntimeError("job %s did not finish in %ds" % (job, timeout))

    def srun(self, command, *args, env=None):
        p = subprocess.run(["srun", "-N1", "-n1"] + list(args) + ["sh", "-c", command],
                           env=dict(self.env, **(env or {})), capture_output=True, text=True,
                           timeout=120)
        return p.returncode, p.stdout + p.stderr


def job_env(text):
    """NAME=value lines the job printed."""
    env = {}
    for line in text.splitlines():
        if "=" in line and line.split("=", 1)[0].isupper():
            k, v = line.split("=", 1)
            env[k] = v
    return env


SHOW_ENV = "echo SLURM_JOB_ID=$SLURM_JOB_ID; for v in OMP_NUM_THREADS MKL_NUM_THREADS " \
           "DLPROF_WORKLOAD DLPROF_JOB; do eval \"echo $v=\\${$v-}\"; done"


def daemon_jobs(d, ext, registered=True):
    """The daemon's jobs with external id ext.

    registered: only those the hooks registered (over the socket, so with a
    uid), not those the daemon's own discovery found from the job's
    processes."""
    _, _, body = d.get("/api/v1/jobs?state=all")
    jobs = body["jobs"] if isinstance(body, dict) else body
    return [j for j in jobs if j.get("external_id") == ext and (not registered or j.get("uid") is not None)]


def recommendation(d, workload, **params):
    """intra_threads the daemon recommends."""
    q = "".join("&%s=%s" % kv for kv in params.items())
    status, _, body = d.get("/api/v1/recommend?workload=%s&format=json%s" % (workload, q))
    assert status == 200, (status, body)
    return body["config"]["intra_threads"]


def wait_ended(d, ext, timeout=30, exit_status=False):
    """The jobs with external id ext once all have ended (or as they are at the timeout).

    Discovery may end a job (no process left) before the Epilog reports its exit
    code: with exit_status, waits for that report too."""
    deadline = time.time() + timeout
    while True:
        jobs = daemon_jobs(d, ext, registered=False)
        if jobs and all(j["state"] == "ended" and (not exit_status or j["exit_status"] is not None)
                        for j in jobs):
            return jobs
        if time.time() > deadline:
            return jobs
        time.sleep(0.2)


def hook_copies(root, hooks_conf):
    """The built hooks, pointed at this test's settings file and dlprofctl."""
    paths = {}
    for name in ("dlprof-taskprolog", "dlprof-epilog"):
        with open(os.path.join(BUILDDIR, "contrib", "slurm", name)) as f:
            text = f.read()
        lines = []
        for line in text.splitlines():
            if line.startswith("conf="):
                line = "conf=" + hooks_conf
            elif line.startswith("dlprofctl="):
                line = "dlprofctl=" + os.path.join(BUILDDIR, "tools", "dlprofctl")
            lines.append(line)
        paths[name] = os.path.join(root, name)
        with open(paths[name], "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(paths[name], 0o755)
    return paths


def spank_plugin(root):
    """The plugin the build made, or one compiled here; (path, None) or (None, reason)."""
    built = os.path.join(BUILDDIR, "contrib", "slurm", "dlprof_spank.so")
    if os.path.exists(built):
        return built, None
    if not os.path.exists("/usr/include/slurm/spank.h"):
        return None, "no slurm/spank.h (libslurm-dev) to build the plugin"
    out = os.path.join(root, "dlprof_spank.so")
    src = lambda *p: os.path.join(SRCDIR, *p)  # noqa: E731
    cmd = [os.environ.get("CC", "cc"), "-std=c11", "-O2", "-fPIC", "-shared", "-Wall", "-Werror",
           "-include", os.path.join(BUILDDIR, "autoconfig.h"), "-I" + src("tools"),
           "-I" + src("contrib", "slurm"),
           "-Wl,--version-script=" + src("contrib", "slurm", "dlprof_spank.map"),
           "-o", out, src("contrib", "slurm", "dlprof_spank.c"),
           src("contrib", "slurm", "spank_json.c"), src("tools", "ctl_http.c"), "-lcurl"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, "cannot build the plugin: %s" % p.stderr[-300:]
    return out, None


def hung_daemon():
    """A socket that accepts connections and never answers."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = tempfile.mktemp(prefix="dlprof-hung-", suffix=".sock")
    s.bind(path)
    s.listen(64)
    return s, path


def main():
    tap = Tap(plan=CASES)
    if os.geteuid() != 0:
        tap.skip_all("needs root to run slurmd")
    if os.environ.get("DLPROF_SKIP_SLURM"):
        tap.skip_all("DLPROF_SKIP_SLURM is set")
    if not shutil.which("curl"):
        tap.skip_all("the TaskProlog needs curl")
    reason = ensure_slurm()
    if reason:
        tap.skip_all(reason)

    root = tempfile.mkdtemp(prefix="dlprof-slurm-")
    os.chmod(root, 0o755)
    cluster = Cluster(root)
    try:
        cluster.start_munge()
        run_hooks(tap, cluster, root)
        run_plugin(tap, cluster, root)
    except Exception as exc:  # noqa: BLE001 - a broken set-up fails the file, with the logs
        tap.ok(False, "the Slurm cluster runs the tests",
               "%s\n--- slurmctld\n%s\n--- slurmd\n%s" % (
                   exc, cluster.log("slurmctld.log")[-3000:], cluster.log("slurmd.log")[-3000:]))
    finally:
        cluster.stop_all()
        if not os.environ.get("DLPROF_KEEP_TMP"):
            shutil.rmtree(root, ignore_errors=True)
    tap.done()


def run_hooks(tap, cluster, root):
    hooks_conf = os.path.join(root, "slurm-hooks.conf")
    hooks = hook_copies(root, hooks_conf)
    open(os.path.join(root, "plugstack.conf"), "w").close()
    cluster.write_conf(["TaskProlog=" + hooks["dlprof-taskprolog"], "Epilog=" + hooks["dlprof-epilog"]])
    with Daemon() as d:
        with open(hooks_conf, "w") as f:
            f.write("socket=%s\ntimeout=5\n" % d.socket_path)
        cluster.start()

        job, rc, out = cluster.sbatch(SHOW_ENV + "; exit 3", "--comment=dlprof:deploy-a batch=32",
                                      "-J", "ignored-name")
        env = job_env(out)
        ext = "slurm:" + job

        @tap.test("TaskProlog: the workload comes from --comment")
        def _():
            assert env.get("SLURM_JOB_ID") == job, out
            assert env.get("DLPROF_WORKLOAD") == "deploy-a", out

        @tap.test("TaskProlog: OMP_NUM_THREADS is the daemon's recommendation")
        def _():
            rec = recommendation(d, "deploy-a", batch=32)
            assert env.get("OMP_NUM_THREADS") == str(rec), (rec, out)
            assert env.get("MKL_NUM_THREADS") == str(rec), (rec, out)

        @tap.test("TaskProlog: the daemon records the job under slurm:ID with its params")
        def _():
            jobs = daemon_jobs(d, ext)
            assert len(jobs) == 1, jobs
            assert jobs[0]["workload"] == "deploy-a", jobs
            assert jobs[0]["params"] == {"batch": "32"} or jobs[0]["params"] == {"batch": 32}, jobs
            assert env.get("DLPROF_JOB") == str(jobs[0]["id"]), (env, jobs)

        @tap.test("Epilog: the job ends with its exit code")
        def _():
            wait_ended(d, ext, exit_status=True)
            jobs = daemon_jobs(d, ext)
            assert jobs and jobs[0]["state"] == "ended", jobs
            assert jobs[0]["exit_status"] == 3, jobs

        @tap.test("Epilog: the job's diagnosis is appended to its output")
        def _():
            def appended():
                with open(cluster.last_out) as f:
                    return "dlprof diagnosis of job" in f.read()
            wait_until(appended, timeout=15)

        rc, out = cluster.srun(SHOW_ENV, env={"DLPROF_WORKLOAD": "deploy-b"})
        env = job_env(out)

        @tap.test("TaskProlog with srun: workload from DLPROF_WORKLOAD, job recorded and ended")
        def _():
            assert rc == 0, out
            assert env.get("DLPROF_WORKLOAD") == "deploy-b", out
            rec_b = recommendation(d, "deploy-b")
            assert env.get("OMP_NUM_THREADS") == str(rec_b), (rec_b, out)
            wait_ended(d, "slurm:" + env["SLURM_JOB_ID"], exit_status=True)
            jobs = daemon_jobs(d, "slurm:" + env["SLURM_JOB_ID"])
            assert len(jobs) == 1 and jobs[0]["workload"] == "deploy-b", jobs
            assert jobs[0]["state"] == "ended" and jobs[0]["exit_status"] == 0, jobs

        job, rc, out = cluster.sbatch(SHOW_ENV + "; srun -n1 sh -c 'echo STEP_OMP=$OMP_NUM_THREADS'",
                                      "-J", "deploy-c")
        env = job_env(out)

        @tap.test("TaskProlog: workload from the job name; later steps inherit, one registration")
        def _():
            assert rc == 0, out
            assert env.get("DLPROF_WORKLOAD") == "deploy-c", out
            assert env.get("STEP_OMP") == env.get("OMP_NUM_THREADS"), out
            assert len(daemon_jobs(d, "slurm:" + job)) == 1, daemon_jobs(d, "slurm:" + job)

        ctl = os.path.join(BUILDDIR, "tools", "dlprofctl")
        job, rc, out = cluster.sbatch("%s -s %s run --workload deploy-run -- sh -c "
                                      "'echo RANK_$RANK=$WORLD_SIZE:$SLURM_PROCID:$DLPROF_WORKLOAD'"
                                      % (ctl, d.socket_path), "-n", "2", "-J", "deploy-run")

        @tap.test("dlprofctl run in an sbatch allocation: ranks under srun with env://'s variables, one job")
        def _():
            assert rc == 0, out
            assert "under srun" in out, out
            assert "RANK_0=2:0:deploy-run" in out and "RANK_1=2:1:deploy-run" in out, out
            wait_ended(d, "slurm:" + job, exit_status=True)
            jobs = daemon_jobs(d, "slurm:" + job)
            assert len(jobs) == 1 and jobs[0]["exit_status"] == 0, jobs

        job, rc, out = cluster.sbatch(SHOW_ENV, "-J", "deploy-off", env={"DLPROF_MODE": "off"})
        env = job_env(out)

        @tap.test("TaskProlog: DLPROF_MODE=off leaves the job alone")
        def _():
            assert rc == 0, out
            assert env.get("DLPROF_WORKLOAD") == "" and env.get("OMP_NUM_THREADS") == "", out
            assert daemon_jobs(d, "slurm:" + job) == [], daemon_jobs(d, "slurm:" + job)

        with open(hooks_conf, "w") as f:
            f.write("socket=%s\ntimeout=5\nreport=no\n" % d.socket_path)
        job, rc, out = cluster.sbatch(SHOW_ENV, "-J", "deploy-quiet")

        @tap.test("Epilog with report=no: the job ends, nothing is appended")
        def _():
            wait_ended(d, "slurm:" + job)
            time.sleep(1)
            with open(cluster.last_out) as f:
                text = f.read()
            assert daemon_jobs(d, "slurm:" + job)[0]["state"] == "ended", daemon_jobs(d, "slurm:" + job)
            assert "dlprof diagnosis" not in text, text

    # The daemon is stopped: jobs must run as if dlprof were absent.
    job, rc, out = cluster.sbatch(SHOW_ENV + "; echo done", "-J", "deploy-down")
    env = job_env(out)

    @tap.test("TaskProlog with the daemon stopped: the job runs normally, untouched")
    def _():
        assert rc == 0 and "done" in out, out
        assert env.get("OMP_NUM_THREADS") == "" and env.get("DLPROF_JOB") == "", out

    hung, hung_path = hung_daemon()
    try:
        with open(hooks_conf, "w") as f:
            f.write("socket=%s\ntimeout=1\n" % hung_path)
        job, rc, out = cluster.sbatch(SHOW_ENV + "; echo done", "-J", "deploy-hung")

        @tap.test("TaskProlog with a daemon that never answers: the job runs normally")
        def _():
            assert rc == 0 and "done" in out, out
            assert job_env(out).get("OMP_NUM_THREADS") == "", out
    finally:
        hung.close()
        os.unlink(hung_path)
    cluster.stop()


def run_plugin(tap, cluster, root):
    plugin, reason = spank_plugin(root)
    names = ["SPANK --dlprof=recommend", "SPANK --dlprof=tune", "SPANK --dlprof=off",
             "SPANK bad --dlprof refused", "SPANK with the daemon stopped"]
    if not plugin:
        for n in names:
            tap.skip(n, reason)
        return
    with Daemon() as d:
        with open(os.path.join(root, "plugstack.conf"), "w") as f:
            f.write("required %s default=recommend socket=%s timeout=2\n" % (plugin, d.socket_path))
        cluster.write_conf([])
        cluster.start()

        job, rc, out = cluster.sbatch(SHOW_ENV, "--dlprof=recommend", env={"DLPROF_WORKLOAD": "deploy-s"})
        env = job_env(out)

        @tap.test(names[0] + ": settings, DLPROF_JOB, recorded under slurm:ID, ended")
        def _():
            assert rc == 0, out
            assert env.get("DLPROF_WORKLOAD") == "deploy-s", out
            rec = recommendation(d, "deploy-s")
            assert env.get("OMP_NUM_THREADS") == str(rec), (rec, out)
            wait_ended(d, "slurm:" + job)
            jobs = daemon_jobs(d, "slurm:" + job)
            assert len(jobs) == 1 and jobs[0]["workload"] == "deploy-s", jobs
            assert env.get("DLPROF_JOB") == str(jobs[0]["id"]), (env, jobs)
            assert jobs[0]["state"] == "ended", jobs

        rc, out = cluster.srun(SHOW_ENV, "--dlprof=tune", "-J", "deploy-t")
        env = job_env(out)

        @tap.test(names[1] + ": the job starts with the config the tuner assigned it")
        def _():
            assert rc == 0, out
            jobs = daemon_jobs(d, "slurm:" + env["SLURM_JOB_ID"])
            assert len(jobs) == 1 and jobs[0]["workload"] == "deploy-t", jobs
            threads = jobs[0]["config"].get("intra_threads")
            assert threads is not None and env.get("OMP_NUM_THREADS") == str(threads), (jobs, out)

        job, rc, out = cluster.sbatch(SHOW_ENV, "--dlprof=off", "-J", "deploy-o")
        env = job_env(out)

        @tap.test(names[2] + ": nothing set, nothing registered")
        def _():
            assert rc == 0, out
            assert env.get("OMP_NUM_THREADS") == "" and env.get("DLPROF_JOB") == "", out
            assert daemon_jobs(d, "slurm:" + job) == [], daemon_jobs(d, "slurm:" + job)

        job, rc, out = cluster.sbatch(SHOW_ENV, "--dlprof=sometimes")

        @tap.test(names[3] + " at submission")
        def _():
            assert rc != 0 and "dlprof" in out, (rc, out)

    job, rc, out = cluster.sbatch(SHOW_ENV + "; echo done", "-J", "deploy-s-down")

    @tap.test(names[4] + ": the job runs normally, untouched")
    def _():
        assert rc == 0 and "done" in out, out
        assert job_env(out).get("OMP_NUM_THREADS") == "", out
    cluster.stop()


if __name__ == "__main__":
    main()
