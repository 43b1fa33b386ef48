"""The reporter: the one thread that talks to the daemon after start.

About once a second it registers the job if that has not worked yet, sends
the buffered samples grouped by the config they ran under, and hands each
config the daemon answers to the session, which applies it at the job's next
step boundary.  While the daemon measures a config it proposed, its answers
say within how many steps it wants the next report ("report_within"): the
job's thread counts its steps (stepped()) and wakes the reporter then, so a
proposal that loses is left after a few steps, not after a second of them.
Batches are numbered; one whose answer was lost is sent again unchanged, so
the daemon stores it exactly once.  It never raises into the job: a daemon
that is away or answers errors costs one warning per outage and the samples
of that time (kept while the buffer bound allows, re-sent when the daemon is
back).

Before the thread starts, the job's thread may call register() and
fetch_config() itself (so the job starts with its assigned config); the
Transport passes to the reporter thread at start().
"""

import logging
import os
import threading
import time

from ._buffer import batches
from ._transport import ApiError, Unreachable

log = logging.getLogger("dlprof")

# After failures the reporter waits 2, 4, then 8 intervals between tries
# (an attempt at an absent daemon costs next to nothing; one that hangs
# costs a timeout in this thread only).
MAX_BACKOFF_INTERVALS = 8
# Samples older than this are not sent: the daemon refuses stale timestamps
# and refuses a whole batch for one bad sample.
MAX_SAMPLE_AGE_S = 600.0
# Samples per request; the daemon's default limit is 10000.
MAX_BATCH = 2000


class Health:
    """Warns once per outage and once per kind of refusal; notes recovery."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.down = False
        self._refusals = set()

    def failed(self, why):
        if not self.down:
            self.down = True
            log.warning("dlprof: dlprofd at %s is not answering (%s); the job runs on "
                        "untouched and reporting resumes when it answers", self.endpoint, why)

    def ok(self):
        if self.down:
            self.down = False
            log.info("dlprof: dlprofd at %s answers again; reporting resumed", self.endpoint)

    def refused(self, what, exc):
        key = (what, exc.status, exc.error)
        if key not in self._refusals:
            self._refusals.add(key)
            if exc.status == 0:
                log.warning("dlprof: cannot send %s: %s", what, exc.detail)
            else:
                log.warning("dlprof: dlprofd refused %s: %s", what, exc)


class Reporter:
    """See the module comment.  on_config(config) runs in the calling thread."""

    def __init__(self, transport, buffer, on_config, registration=None, job_id=None,
                 end_job=True, interval=1.0, rank=None):
        self.transport = transport
        self.buffer = buffer
        self.on_config = on_config
        self.registration = registration      # body of POST /api/v1/jobs, or None
        self.job_id = job_id                   # written by the reporter thread (before start, the job's)
        self.env = None                        # the variables the registration answer served
        self.end_job = end_job
        self.rank = rank                       # this process's rank in a distributed job, or None
        self.disabled = False                  # nothing will ever be accepted
        self.health = Health(transport.endpoint)
        self.max_batch = MAX_BATCH
        self.interval = interval
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = None
        self._exit_status = 0
        # Each batch carries (stream, seq): a resend after a lost answer is
        # recognised by the daemon and stored once.  The stream is this
        # reporter's own, as several processes may report for one job.
        self._stream = os.urandom(8).hex()
        self._seq = 0                          # the last batch's number
        self._pending = None                   # (body, pairs) sent with no answer yet
        self._cycles = threading.Condition()  # guards the two counters below
        self._asked = 0                        # flush() requests made
        self._served = 0                       # requests a finished cycle covered
        # Steps within which the daemon asked for the next report, or None
        # (written by this thread, read by the job's: one reference swap).
        self.report_within = None
        self._steps_unsent = 0                 # the job's thread's count since it last woke this one

    # ---- job's thread, before start() ----

    def register(self):
        """Registers the job; True when it has an id."""
        try:
            return self._register()
        except Exception as exc:      # a bug here must not reach the job
            self._internal_error(exc)
            return False

    def _internal_error(self, exc):
        log.warning("dlprof: internal error, reporting stops; the job runs on: %r", exc)
        self.disabled = True

    def _register(self):
        try:
            _, doc = self.transport.request("POST", "/api/v1/jobs", self.registration)
        except Unreachable as exc:
            self.health.failed(exc)
            return False
        except ApiError as exc:
            if exc.status >= 500 or exc.status == 429:
                self.health.failed(exc)
                return False
            # The daemon will refuse this registration every time.
            self.health.refused("the job's registration", exc)
            self.disabled = True
            return False
        self.health.ok()
        if not isinstance(doc, dict) or not isinstance(doc.get("id"), int):
            self.health.failed("registration answer without an id")
            return False
        self.job_id = doc["id"]
        if isinstance(doc.get("env"), dict):
            self.env = doc["env"]
        self._take_config(doc)
        return True

    def fetch_config(self):
        """The current config of a job registered by someone else (DLPROF_JOB)."""
        try:
            self._fetch_config()
        except Exception as exc:
            self._internal_error(exc)

    def _fetch_config(self):
        try:
            _, doc = self.transport.request("GET", "/api/v1/jobs/%d" % self.job_id)
        except Unreachable as exc:
            self.health.failed(exc)
            return
        except ApiError as exc:
            if exc.status == 404:
                self.health.refused("job %d from DLPROF_JOB" % self.job_id, exc)
                self.disabled = True
            else:
                self.health.failed(exc)
            return
        self.health.ok()
        self._take_config(doc)

    def _take_config(self, doc):
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
            within = doc.get("report_within")
            self.report_within = within if isinstance(within, int) and within >= 1 else None
            self.on_config(doc["config"])

    # ---- job's thread, after start() ----

    def stepped(self):
        """A step was buffered: wakes the thread when the daemon asked for a report by now."""
        self._steps_unsent += 1
        within = self.report_within
        if within is not None and self._steps_unsent >= within:
            self._steps_unsent = 0
            self._wake.set()

    # ---- the thread ----

    def start(self):
        self._thread = threading.Thread(target=self._run, name="dlprof-reporter", daemon=True)
        self._thread.start()

    def close(self, exit_status, timeout):
        """Final flush and end, waiting at most timeout seconds for them."""
        self._exit_status = exit_status
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("dlprof: gave up waiting %.0f s for the final report", timeout)

    def flush(self, timeout):
        """The job's thread: waits until a cycle that started after this call ended."""
        with self._cycles:
            self._asked += 1
            ticket = self._asked
        self._wake.set()
        with self._cycles:
            self._cycles.wait_for(lambda: self._served >= ticket, timeout)

    def _run(self):
        delay = self.interval
        while not self._stop.is_set():
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop.is_set():
                break
            with self._cycles:
                ticket = self._asked
            ok = self._safe_cycle()
            with self._cycles:
                self._served = ticket
                self._cycles.notify_all()
            if ok:
                delay = self.interval
            else:
                delay = min(2 * delay, MAX_BACKOFF_INTERVALS * self.interval)
        try:
            if self._safe_cycle() and not self.disabled:
                self._end()
        except Exception as exc:
            self._internal_error(exc)
        finally:
            self.transport.close()

    def _safe_cycle(self):
        try:
            return self.cycle()
        except Exception as exc:
            self._internal_error(exc)
            return True

    def cycle(self):
        """Registers if needed and sends what is buffered; False on failure."""
        if self.disabled:
            self.buffer.take()
            self._pending = None
            return True
        if self.job_id is None and not self.register():
            return self.disabled
        if self._pending is not None:
            body, run = self._pending
            self._pending = None
            if not self._post(body, run, []):
                return False
        items = self._fresh(self.buffer.take())
        sent = 0
        for config, run in batches(items, self.max_batch):
            self._seq += 1
            body = {"samples": [s for _, s in run], "config": config,
                    "seq": self._seq, "stream": self._stream}
            if self.rank is not None:
                body["rank"] = self.rank
            if not self._post(body, run, items[sent + len(run):]):
                return False
            sent += len(run)
        return True

    def _post(self, body, run, rest):
        """Sends one batch; False, with what is unsent kept, ends the cycle."""
        try:
            _, doc = self.transport.request("POST", "/api/v1/jobs/%d/metrics" % self.job_id, body)
        except Unreachable as exc:
            # It may have been stored before the connection broke: it is sent
            # again as it is, same seq, and the daemon stores it at most once.
            self._pending = (body, run)
            self.buffer.give_back(rest)
            self.health.failed(exc)
            return False
        except ApiError as exc:
            if not self._refused(exc, len(run)):
                # Refused whole, so stored nowhere: it may be split anew.
                self.buffer.give_back(run + rest)
                return False
        else:
            self.health.ok()
            self._take_config(doc)
        return True

    def _refused(self, exc, n):
        """Handles an error answer to a batch: True to drop it and go on."""
        if exc.status >= 500 or exc.status == 429:
            self.health.failed(exc)
            return False
        if exc.status == 413 and self.max_batch > 1:
            self.max_batch = max(1, min(self.max_batch, n) // 2)
            return False
        if exc.status == 404 and self.registration is not None:
            # The daemon lost the job (a fresh database): register anew.
            self.health.refused("the metrics of job %d" % self.job_id, exc)
            self.job_id = None
            return False
        self.health.refused("a batch of %d samples" % n, exc)
        if exc.status in (403, 409):
            # Not this job's to report on (another uid's, or ended): stop.
            self.disabled = True
        return True

    def _fresh(self, items):
        cutoff = time.time() - MAX_SAMPLE_AGE_S
        return [p for p in items if p[1]["t"] >= cutoff]

    def _end(self):
        if self.job_id is None or not self.end_job or self.disabled:
            return
        try:
            body = {"exit_status": self._exit_status}
            if self.rank is not None:
                body["rank"] = self.rank      # the job ends with its last rank
            self.transport.request("POST", "/api/v1/jobs/%d/end" % self.job_id, body)
        except Unreachable as exc:
            self.health.failed(exc)
        except ApiError as exc:
            self.health.refused("the end of job %d" % self.job_id, exc)
