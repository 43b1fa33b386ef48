"""Scripts for the zero-touch tests (tests/client/auto.py), written as users write them.

No dlprof line, except in `marks`, which opens its own session and marks its
own steps and phases.  Run as `python3 -m dlprof auto_job.py MODE STEPS OUT`
or under `dlprofctl run`; each writes OUT, a JSON object:
{"pid", "steps", "batch", "site", ...}, site being what the site's own
sitecustomize left (its MARK), or null.

  train    a nested model (backbone: a model with its own children; head;
           dropout) over a DataLoader, SGD with two micro-batches per step,
           a validation forward under no_grad every third step; then the
           model is saved whole (torch.save) and deep-copied; then the
           script drops the model and its optimizer, and "freed" says
           whether each died there (dlprof must never be their last owner)
  infer    the same model in inference: no optimizer, eval(), no_grad
  marks    the training loop inside its own dlprof.session, phases "fwd"
           and "bwd", s.step(samples=...) at each step
  notorch  never imports torch; prints a line and exits with status 3
"""
import json
import os
import sys


def site_mark():
    return getattr(sys.modules.get("sitecustomize"), "MARK", None)


def model_and_data(torch, batch):
    global Inner, Outer

    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Linear(64, 512)
            self.blocks = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                              torch.nn.Linear(512, 512), torch.nn.ReLU())

        def forward(self, x):
            return self.blocks(self.embed(x))

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = Inner()
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(512, 10)

        def forward(self, x):
            return self.head(self.dropout(self.backbone(x)))

    # Module-level names, as a script's classes are, so torch.save can pickle the model.
    Inner.__qualname__, Outer.__qualname__ = "Inner", "Outer"
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(batch * 64, 64), torch.randint(0, 10, (batch * 64,)))
    return Outer(), torch.utils.data.DataLoader(data, batch_size=batch)


def train(torch, steps, batch, out):
    import copy
    import gc
    import io
    import weakref

    model, loader = model_and_data(torch, batch // 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    val = torch.randn(7, 64)
    it = iter(loader)
    for step in range(steps):
        opt.zero_grad()
        for _ in range(2):
            x, y = next(it)
            torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if step % 3 == 2:
            with torch.no_grad():
                model.eval()
                model(val)
                model.train()
    buf = io.BytesIO()
    torch.save(model, buf)
    out["saved_bytes"] = buf.tell()
    out["copy_class"] = type(copy.deepcopy(model)).__name__
    out["class"] = type(model).__name__
    owned = [weakref.ref(model), weakref.ref(opt)]
    del model, opt
    gc.collect()
    out["freed"] = [ref() is None for ref in owned]


def infer(torch, steps, batch, out):
    model, _ = model_and_data(torch, batch)
    model.eval()
    x = torch.randn(batch, 64)
    with torch.no_grad():
        for _ in range(steps):
            model(x)


def marks(torch, steps, batch, out):
    import dlprof

    model, loader = model_and_data(torch, batch)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with dlprof.session(workload="marked", interval=0.3) as s:
        for step, (x, y) in zip(range(steps), loader):
            with s.phase("fwd"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            with s.phase("bwd"):
                opt.zero_grad()
                loss.backward()
                opt.step()
            s.step(samples=len(x))
        out["job_id"] = s.job_id


def main():
    mode, steps, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    out = {"pid": os.getpid(), "steps": steps, "batch": 32, "site": site_mark()}
    if mode == "notorch":
        print("no torch here")
        out["torch_loaded"] = "torch" in sys.modules
        with open(path, "w") as f:
            json.dump(out, f)
        sys.exit(3)
    import torch

    {"train": train, "infer": infer, "marks": marks}[mode](torch, steps, out["batch"], out)
    with open(path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
