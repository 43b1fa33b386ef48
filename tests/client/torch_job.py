"""A PyTorch job under the dlprof client, run by the end-to-end tests.

    /usr/bin/python3 torch_job.py lstm|cnn --out REPORT.json [--seconds S] [--knobs JSON]

lstm: inference of an embedding -> LSTM -> linear decoder model, one phase
per part ("embedding", "lstm", "decoder").  cnn: training of a small
convolutional network on random images through a DataLoader whose worker
count comes from the session ("data", "forward", "backward", "optimizer"),
reporting the loss.  Both run until S seconds or --max-steps steps have
passed, at least --min-steps steps, so a run stays short on a busy machine.

The report (JSON) holds what only the job can see: the job id, the config
in force at each step, the thread counts torch ran with at the start and end
of each step and inside each phase, torch's inter-op threads, the DataLoader
variable.  The test compares it with what the daemon stored.  The daemon's
address comes from the environment (DLPROF_URL or DLPROF_SOCKET).
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client", "python"))
import dlprof  # noqa: E402


def lstm_job(s, steps):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(1000, 32)
    lstm = torch.nn.LSTM(32, 64, batch_first=True)
    dec = torch.nn.Linear(64, 1000)
    x = torch.randint(0, 1000, (16, 12))
    with torch.no_grad():
        for _ in steps:
            with s.phase("embedding"):
                e = emb(x)
            with s.phase("lstm"):
                h, _ = lstm(e)
            with s.phase("decoder"):
                out = dec(h)
            yield x.shape[0], None, {"logit_mean": float(out.mean())}


def cnn_job(s, steps):
    torch.manual_seed(0)
    images = torch.randn(256, 1, 16, 16)
    labels = torch.randint(0, 10, (256,))
    data = torch.utils.data.TensorDataset(images, labels)
    workers = s.dataloader_workers or 0
    loader = torch.utils.data.DataLoader(data, batch_size=32, shuffle=True, num_workers=workers,
                                         persistent_workers=workers > 0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 4 * 4, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = iter(())
    for _ in steps:
        with s.phase("data"):
            try:
                xb, yb = next(batches)
            except StopIteration:
                batches = iter(loader)
                xb, yb = next(batches)
        with s.phase("forward"):
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
        with s.phase("backward"):
            opt.zero_grad()
            loss.backward()
        with s.phase("optimizer"):
            opt.step()
        yield xb.shape[0], loss.item(), {}


class Recorder:
    """Wraps s.phase to record the threads torch runs with inside each phase."""

    def __init__(self, s):
        self.s = s
        self.phases = {}

    def phase(self, name):
        recorder, inner = self, self.s.phase(name)

        class _Ctx:
            def __enter__(self):
                inner.__enter__()
                recorder.phases[name] = torch.get_num_threads()

            def __exit__(self, *exc):
                return inner.__exit__(*exc)
        return _Ctx()

    @property
    def dataloader_workers(self):
        return self.s.dataloader_workers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=("lstm", "cnn"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--min-steps", type=int, default=5)
    ap.add_argument("--max-steps", type=int, default=400)
    ap.add_argument("--knobs", default=None, help="JSON object of declared knobs")
    ap.add_argument("--interval", type=float, default=0.25)
    args = ap.parse_args()

    workload = {"lstm": "lstm-infer", "cnn": "cnn-train"}[args.kind]
    params = {"batch": 16 if args.kind == "lstm" else 32}
    knobs = json.loads(args.knobs) if args.knobs else None
    report = {"steps": [], "threads_before": torch.get_num_threads()}
    with dlprof.session(workload=workload, params=params, knobs=knobs,
                        objective="goodput" if args.kind == "cnn" else None,
                        interval=args.interval) as s:
        report["job_id"] = s.job_id
        report["config_at_start"] = s.config
        report["threads_at_start"] = torch.get_num_threads()
        rec = Recorder(s)
        job = lstm_job(rec, iter(int, 1)) if args.kind == "lstm" else cnn_job(rec, iter(int, 1))
        t0 = time.monotonic()
        n = 0
        while True:
            config = s.config
            begin = torch.get_num_threads()
            rec.phases = {}
            samples, loss, extra = next(job)
            end = torch.get_num_threads()
            s.step(samples=samples, loss=loss, **extra)
            report["steps"].append({"config": config, "threads_begin": begin, "threads_end": end,
                                    "phases": rec.phases, "loss": loss})
            n += 1
            if n >= args.max_steps or (n >= args.min_steps and time.monotonic() - t0 >= args.seconds):
                break
        report["config_at_end"] = s.config
        report["threads_after_steps"] = torch.get_num_threads()
        report["interop_threads"] = torch.get_num_interop_threads()
        report["dataloader_workers"] = s.dataloader_workers
        report["env_dataloader_workers"] = os.environ.get("DLPROF_DATALOADER_WORKERS")
        report["job_id_at_end"] = s.job_id
    report["seconds"] = time.monotonic() - t0
    with open(args.out, "w") as f:
        json.dump(report, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
