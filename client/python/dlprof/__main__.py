"""python3 -m dlprof [--workload NAME] SCRIPT [ARGS...] | -m MODULE [ARGS...]

Runs an unmodified script (or module) as python3 would, under the
zero-touch path (dlprof._auto): the session opens before the script runs,
steps, phases and DDP's collectives are found and reported, and the job
ends with the script's exit status.  Descendant Python processes load the
bootstrap too (PYTHONPATH), so torch.multiprocessing.spawn ranks join the
job.  DLPROF_AUTO=0 keeps the session and installs no hook.
"""

import os
import runpy
import sys

USAGE = "usage: python3 -m dlprof [--workload NAME] SCRIPT [ARGS...] | -m MODULE [ARGS...]"


def _exit_status(exc):
    if isinstance(exc, SystemExit):
        code = exc.code
        return 0 if code is None else code if isinstance(code, int) else 1
    return 130 if isinstance(exc, KeyboardInterrupt) else 1


def main(argv):
    args = list(argv)
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--workload" and args:
            os.environ["DLPROF_WORKLOAD"] = args.pop(0)
        elif opt.startswith("--workload="):
            os.environ["DLPROF_WORKLOAD"] = opt.split("=", 1)[1]
        elif opt == "--":
            break
        else:
            print(USAGE, file=sys.stderr)
            return 2 if opt != "--help" else 0
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        print(USAGE, file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    module = args[1] if args[0] == "-m" else None
    if module is not None:
        sys.argv = [module] + args[2:]
        sys.path[0] = os.getcwd()
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))

    from . import _auto

    auto = _auto.boot(eager=True)
    status = 0
    try:
        if module is not None:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(args[0], run_name="__main__")
    except BaseException as exc:
        status = _exit_status(exc)
        raise
    finally:
        auto.finish(status)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
