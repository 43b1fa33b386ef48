"""dlprof: the job-side client of dlprofd.

    import dlprof
    with dlprof.session(workload="lstm-infer", params={"batch": 64}) as s:
        for batch in data:
            with s.phase("lstm"):
                out = model(batch)
            s.step(samples=len(batch), loss=loss.item())

The session registers the job with the daemon (or reuses DLPROF_JOB), applies
the config it assigns (torch intra-op and inter-op threads, DataLoader
workers through DLPROF_DATALOADER_WORKERS), reports step time, samples/s,
loss and time per phase about once a second from a background thread, and
switches to new settings the daemon assigns at step boundaries.  It never
breaks the job: with the daemon away it warns once and changes nothing.

Standard library only; torch is used when the job has imported it.  The
session's modules are imported on first use: the zero-touch bootstrap
imports this package in every Python process of a job (dlprof._auto).

`python3 -m dlprof script.py` runs an unmodified script under the client
(dlprof.__main__).
"""

__all__ = ["Session", "session", "__version__"]
__version__ = "0.1.0"


def __getattr__(name):
    if name == "Session":
        from ._session import Session
        return Session
    raise AttributeError("module 'dlprof' has no attribute %r" % name)


def session(workload=None, params=None, url=None, socket=None, knobs=None, objective=None,
            **options):
    """
    A Session for this job, to use as a context manager.

    workload   the workload's name (default: DLPROF_WORKLOAD, else the script's name)
    params     the workload's parameters, a dict (e.g. {"batch": 64})
    url        the daemon's HTTP address (default: DLPROF_URL, else
               http://127.0.0.1:8080 when the default socket is absent)
    socket     the daemon's Unix socket (default: DLPROF_SOCKET, else
               /run/dlprofd/dlprofd.sock when it exists); wins over url
    knobs      the knobs the job declares, e.g. {"intra_threads": {"min": 1, "max": 8}}
    objective  "throughput" (default), "goodput" (samples/s x statistical
               efficiency; see Session.ddp_comm_hook and micro_batch) or
               "efficiency"

    options: interval (seconds between flushes, 1.0), timeout (seconds per
    request, 2.0), end_job (end the job on exit; default: when this session
    registered it, not when it reuses DLPROF_JOB), token (bearer token;
    default DLPROF_TOKEN), rank, world_size, local_rank (this process's
    place in a distributed job, when neither the environment nor an
    initialised torch.distributed says it: see dlprof._dist).
    """
    from ._session import Session

    return Session(workload=workload, params=params, url=url, socket=socket, knobs=knobs,
                   objective=objective, **options)
