"""A distributed job spanning nodes, seen whole from each of them through the cluster store.

A private PostgreSQL (pgserver.py) and two daemons with cluster_store set.

Over REST (as test_ranks.py's ranks report): rank 0 of a job joins on A,
rank 1 on B, with their shared external id; each daemon's job JSON (and
its jobs list) then lists both ranks, the other node's marked with the node that shared it,
and ranks_elsewhere is 0; A's global throughput adds rank 1's once; the
straggler verdict on A names rank 1, which runs on B; with PostgreSQL down
B's newer figures wait in its ranks' outbox and reach A once it is back;
rank 1's end on B is seen on A.  With the database gone a node's ranks'
outbox keeps the newest changes within cluster_outbox_limit.

Across network namespaces (root, `ip netns`, torch for /usr/bin/python3;
skipped, saying which is missing, otherwise): daemons A and B each in a
namespace of its own joined by a veth pair, one real 2-rank gloo job with
rank 0 in A's namespace and rank 1 in B's (their collectives cross the
veth; each rank has a hostname of its own and reports to its own node's
daemon on that namespace's loopback); both daemons' job JSON, which the
dashboard's job page renders, lists both ranks with their nodes.  The
namespaces are removed however the test ends.

Without the cluster store a node shows its own ranks and says how many run
elsewhere: test_ranks.py.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import SRCDIR, Daemon, Tap, wait_for  # noqa: E402
from pgserver import PgServer, cluster_args  # noqa: E402

tap = Tap()
SYSTEM_PYTHON = "/usr/bin/python3"
DIST_JOB = os.path.join(SRCDIR, "tests", "client", "dist_job.py")


def join(d, ext, rank, node, pid, world=2):
    status, _, body = d.post("/api/v1/jobs", {"workload": "xnode", "external_id": ext, "pid": pid,
                                              "rank": {"rank": rank, "world_size": world, "local_rank": 0,
                                                       "node": node, "nodes": 2}})
    assert status in (200, 201), (status, body)
    return body["id"]


def post(d, jid, rank, samples, seq):
    status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": samples, "rank": rank, "seq": seq,
                                                                 "stream": "r%d" % rank})
    assert status == 200, (status, body)


def steps(t, n, step, comm, data=0.0):
    out = []
    for i in range(n):
        ti = t + i * 0.01
        out += [{"t": ti, "name": "step_time_s", "value": step}, {"t": ti, "name": "comm_wait_s", "value": comm},
                {"t": ti, "name": "phase_time_s", "value": data, "phase": "data"}]
    return out


def job(d, jid):
    status, _, body = d.get("/api/v1/jobs/%d" % jid)
    assert status == 200, (status, body)
    return body


def whole(d, jid, nodes, state=None):
    """The job's JSON on d once it lists ranks 0 and 1 on the given nodes (all in state, if given), else None."""
    j = job(d, jid)
    if [k["rank"] for k in j["ranks"]] == [0, 1] and [k["node"] for k in j["ranks"]] == nodes and \
            (state is None or all(k["state"] == state for k in j["ranks"])):
        return j
    return None


def rank_outbox(db):
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        return c.execute("SELECT count(*) FROM cluster_rank_outbox").fetchone()[0]


def rest_tests(pg):
    sleepers = [subprocess.Popen(["sleep", "300"]) for _ in range(2)]
    try:
        with Daemon(args=cluster_args(pg, "node-a")) as a, Daemon(args=cluster_args(pg, "node-b")) as b:
            ids = {}

            @tap.test("ranks on two nodes: each node's job lists both, the other's marked with the node sharing it")
            def _():
                ids["a"] = join(a, "run:xnode-rest", 0, "host-a", sleepers[0].pid)
                ids["b"] = join(b, "run:xnode-rest", 1, "host-b", sleepers[1].pid)
                now = time.time()
                post(a, ids["a"], 0, steps(now, 1, 0.5, 0.2), 1)    # the first batch is the warm-up
                post(b, ids["b"], 1, steps(now, 1, 0.5, 0.2), 1)
                # Rank 1 loads its data slowly: it waits least, rank 0 waits for it.
                post(a, ids["a"], 0, steps(now + 1, 20, 0.5, 0.2, 0.02), 2)
                post(b, ids["b"], 1, steps(now + 1, 20, 0.5, 0.02, 0.2), 2)
                posted = time.time()
                ja = wait_for("A sees rank 1", lambda: whole(a, ids["a"], ["host-a", "host-b"]), 30)
                print("# A listed rank 1 %.2fs after B stored its report" % (time.time() - posted))
                jb = wait_for("B sees rank 0", lambda: whole(b, ids["b"], ["host-a", "host-b"]), 30)
                for j, here, there, other in ((ja, 0, 1, "node-b"), (jb, 1, 0, "node-a")):
                    assert j["world_size"] == 2 and j["ranks_elsewhere"] == 0, j
                    assert "shared_by" not in j["ranks"][here], j["ranks"]
                    assert j["ranks"][there]["shared_by"] == other, j["ranks"]
                    assert j["ranks_shared"]["as_of"] is not None, j
                status, _, listed = a.get("/api/v1/jobs")
                assert status == 200, (status, listed)
                mine = [j for j in listed["jobs"] if j["id"] == ids["a"]]
                assert len(mine) == 1 and [k["node"] for k in mine[0]["ranks"]] == ["host-a", "host-b"], listed
                assert mine[0]["ranks_elsewhere"] == 0, mine
                for d in (a, b):
                    st = d.get("/api/v1/cluster/workloads")[2]["cluster"]["ranks"]
                    assert st["pushed"] >= 1 and st["read"] >= 1 and st["jobs"] == 1 and st["last_read"], st
                k = wait_for("rank 1's steps on A", lambda: (lambda r: r if r["steps"] == 20 else None)(
                    job(a, ids["a"])["ranks"][1]), 30)
                assert abs(k["step_time_s"] - 0.5) < 1e-9 and abs(k["comm_share"] - 0.04) < 1e-9, k

            @tap.test("the straggler verdict on rank 0's node names rank 1 on the other node")
            def _():
                status, _, rep = a.get("/api/v1/jobs/%d/report" % ids["a"])
                assert status == 200, (status, rep)
                v = [v for v in rep["verdicts"] if v["kind"] == "straggler"]
                assert len(v) == 1 and v[0]["rank"] == 1 and v[0]["node"] == "host-b", rep["verdicts"]
                assert v[0]["cause"] == "data_phase", v
                assert [k["rank"] for k in rep["ranks"]] == [0, 1], rep["ranks"]

            @tap.test("the job's global throughput on rank 0's node counts rank 1 on the other node once")
            def _():
                t = time.time() + 10
                post(b, ids["b"], 1, [{"t": t, "name": "samples_per_s", "value": 50.0}], 3)
                wait_for("rank 1's throughput on A",
                         lambda: job(a, ids["a"])["ranks"][1]["samples_per_s"] == 50.0, 30)
                post(a, ids["a"], 0, [{"t": t, "name": "samples_per_s", "value": 100.0}], 3)
                post(a, ids["a"], 0, [{"t": t + 1, "name": "samples_per_s", "value": 100.0}], 4)
                j = job(a, ids["a"])
                assert abs(j["latest"]["samples_per_s"] - 150.0) < 1e-9, j["latest"]
                # B has no rank 0: it keeps rank 1's own series and makes no global figure.
                jb = job(b, ids["b"])
                assert "samples_per_s" not in jb["latest"] and jb["latest"]["rank1.samples_per_s"] == 50.0, jb

            @tap.test("with the database down the other node's newer figures wait in its outbox, then arrive")
            def _():
                pg.kill()
                try:
                    post(b, ids["b"], 1, steps(time.time() + 20, 10, 0.5, 0.02, 0.2), 5)
                    wait_for("rank 1 waiting in B's ranks' outbox", lambda: rank_outbox(b.db) >= 1, 10)
                    assert job(a, ids["a"])["ranks"][1]["steps"] == 20   # A shows what it read before
                    assert job(b, ids["b"])["ranks"][1]["steps"] == 30
                finally:
                    pg.start()
                wait_for("rank 1's newer steps on A", lambda: job(a, ids["a"])["ranks"][1]["steps"] == 30, 60)
                wait_for("B's ranks' outbox empty", lambda: rank_outbox(b.db) == 0, 30)

            @tap.test("rank 1's end on the other node is seen on rank 0's")
            def _():
                status, _, body = b.post("/api/v1/jobs/%d/end" % ids["b"], {"rank": 1, "exit_status": 0})
                assert status == 200, (status, body)
                wait_for("rank 1 ended on A", lambda: job(a, ids["a"])["ranks"][1]["state"] == "ended", 30)
                assert job(a, ids["a"])["state"] == "running"     # rank 0 still runs there
    finally:
        for p in sleepers:
            p.kill()
            p.wait()


def bound_test():
    @tap.test("with the database gone the ranks' outbox keeps the newest changes, at most cluster_outbox_limit; "
              "without cluster_store ranks stay out of it")
    def _():
        with PgServer() as gone:
            conninfo = gone.conninfo
        sleepers = [subprocess.Popen(["sleep", "300"]) for _ in range(5)]
        workdir = tempfile.mkdtemp(prefix="dlprof-test-")
        try:
            with Daemon(args=["--cluster-store", conninfo, "--cluster-outbox-limit", "3"], workdir=workdir) as c:
                ids = {join(c, "run:xnode-bound", r, "host-c", sleepers[r].pid, world=8) for r in range(5)}
                assert len(ids) == 1, ids
                with sqlite3.connect("file:%s?mode=ro" % c.db, uri=True) as db:
                    kept = [r[0] for r in db.execute("SELECT rank FROM cluster_rank_outbox ORDER BY id")]
                assert kept == [2, 3, 4], kept     # the newest three changes
            with Daemon(workdir=workdir) as d:
                jid = join(d, "run:xnode-bound-2", 0, "host-c", sleepers[0].pid)
                post(d, jid, 0, steps(time.time(), 2, 0.5, 0.1), 1)
                assert rank_outbox(d.db) == 3, rank_outbox(d.db)
        finally:
            for p in sleepers:
                p.kill()
                p.wait()
            shutil.rmtree(workdir, ignore_errors=True)


# ---- across network namespaces ----

def netns_missing():
    """Why the namespace test cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN"
    if not shutil.which("ip") or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        return "no `ip netns` (iproute2)"
    if not shutil.which("unshare"):
        return "no unshare (util-linux) to give each rank a hostname of its own"
    if subprocess.call([SYSTEM_PYTHON, "-c", "import torch.distributed"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL) != 0:
        return "no torch for %s (Debian python3-torch)" % SYSTEM_PYTHON
    return None


class Namespaces:
    """Two network namespaces joined by a veth pair (A 10.231.x.1, B 10.231.x.2), removed on exit."""

    def __init__(self):
        tag = os.getpid() % 10000
        self.names = ("dlpx%d-a" % tag, "dlpx%d-b" % tag)
        self.links = ("dlpx%da" % tag, "dlpx%db" % tag)
        net = 1 + os.getpid() % 250
        self.addrs = ("10.231.%d.1" % net, "10.231.%d.2" % net)

    def __enter__(self):
        try:
            for ns in self.names:
                subprocess.run(["ip", "netns", "add", ns], check=True)
            subprocess.run(["ip", "link", "add", self.links[0], "type", "veth", "peer", "name", self.links[1]],
                           check=True)
            for ns, link, addr in zip(self.names, self.links, self.addrs):
                subprocess.run(["ip", "link", "set", link, "netns", ns], check=True)
                subprocess.run(["ip", "-n", ns, "addr", "add", addr + "/24", "dev", link], check=True)
                subprocess.run(["ip", "-n", ns, "link", "set", link, "up"], check=True)
                subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        except BaseException:
            self.__exit__()
            raise
        return self

    def bytes(self, side):
        """(received, sent) bytes of one side's veth."""
        out = subprocess.run(["ip", "-n", self.names[side], "-j", "-s", "link", "show", "dev", self.links[side]],
                             capture_output=True, text=True, check=True).stdout
        stats = json.loads(out)[0]["stats64"]
        return stats["rx"]["bytes"], stats["tx"]["bytes"]

    def __exit__(self, *exc):
        for ns in self.names:   # the veth pair goes with its namespaces
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        return False


class NsDaemon(Daemon):
    """The daemon inside a network namespace; the test reaches it over its Unix socket (the filesystem is shared)."""

    def __init__(self, ns, *args, **kw):
        self.ns = ns
        super().__init__(*args, **kw)

    def command(self):
        return ["ip", "netns", "exec", self.ns] + super().command()

    def request(self, method, path, body=None, headers=None, unix=True, raw=None, timeout=10):
        return super().request(method, path, body=body, headers=headers, unix=True, raw=raw, timeout=timeout)


def start_rank(ns, link, host, rank, master, port, daemon, out_dir):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR=master, MASTER_PORT=str(port), GLOO_SOCKET_IFNAME=link,
               DLPROF_URL="http://127.0.0.1:%d" % daemon.port, DLPROF_NODES="2",
               PYTHONPATH=os.path.join(SRCDIR, "client", "python"))
    for k in ("DLPROF_SOCKET", "DLPROF_RUN_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"):
        env.pop(k, None)
    cmd = ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host,
           SYSTEM_PYTHON, DIST_JOB, "--launched", "--steps", "30", "--width", "128",
           "--workload", "xnode-gloo", "--out", os.path.join(out_dir, "result.json")]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def netns_test(pg):
    name = "a 2-rank gloo job across two network namespaces: both daemons' job pages list both ranks"
    why = netns_missing()
    if why:
        tap.skip(name, why)
        return

    @tap.test(name)
    def _():
        work = tempfile.mkdtemp(prefix="dlprof-xnode-")
        procs = []
        try:
            with Namespaces() as ns, \
                    NsDaemon(ns.names[0], args=cluster_args(pg, "node-a")) as a, \
                    NsDaemon(ns.names[1], args=cluster_args(pg, "node-b")) as b:
                port = 29500 + os.getpid() % 1000
                before = ns.bytes(0)
                dirs = [os.path.join(work, "r%d" % r) for r in (0, 1)]
                for r, d in enumerate((a, b)):
                    os.mkdir(dirs[r])
                    procs.append(start_rank(ns.names[r], ns.links[r], "host-%s" % "ab"[r], r, ns.addrs[0], port,
                                            d, dirs[r]))
                outs = []
                for p in procs:
                    out, _ = p.communicate(timeout=300)
                    outs.append(out.decode(errors="replace"))
                assert all(p.returncode == 0 for p in procs), [o[-3000:] for o in outs]
                # The collectives crossed the veth: 30 all-reduces of the MLP's 3 x (128 x 128 + 128) float
                # gradients (~200 kB each) each way, so well over 1 MB either way.
                after = ns.bytes(0)
                assert after[0] - before[0] > 1e6 and after[1] - before[1] > 1e6, (before, after)
                print("# A's veth: %d bytes in, %d out during the job" % (after[0] - before[0], after[1] - before[1]))
                done = []
                for r in (0, 1):
                    with open(os.path.join(dirs[r], "rank%d.json" % r)) as f:
                        done.append(json.load(f))
                for d, me in ((a, done[0]), (b, done[1])):
                    # Both ranks ended: the other node's end reaches this one within a push and a read.
                    j = wait_for("the whole job, ended, on %s" % d.ns,
                                 lambda: whole(d, me["job_id"], ["host-a", "host-b"], "ended"), 30)
                    assert j["external_id"] == "dist:%s:%d" % (ns.addrs[0], port), j["external_id"]
                    assert j["world_size"] == 2 and j["ranks_elsewhere"] == 0, j
                    here, there = j["ranks"][me["rank"]], j["ranks"][1 - me["rank"]]
                    assert "shared_by" not in here and here["pid"] == me["pid"], j["ranks"]
                    assert there["shared_by"] == ("node-b" if me["rank"] == 0 else "node-a"), j["ranks"]
                    assert there["pid"] == done[1 - me["rank"]]["pid"], (there, done)
                    # Each rank's own node counted its steps (less the warm-up batch); both are there.
                    for k in j["ranks"]:
                        assert 0 < k["steps"] <= 30 and 0 < k["comm_share"] < 1, k
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            shutil.rmtree(work, ignore_errors=True)


with PgServer() as pg:
    rest_tests(pg)
    bound_test()
    netns_test(pg)
tap.done()
