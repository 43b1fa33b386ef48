"""dlprof's zero-touch bootstrap (not a module to import).

`dlprofctl run` and `python3 -m dlprof` put this folder first on
PYTHONPATH, so the interpreter imports this file at start-up as
sitecustomize, before the job's script.  It first runs the sitecustomize
this one hides (the next one on sys.path: a site's or the distribution's),
as `sitecustomize`, so the site keeps its own; usercustomize is not hidden
and runs after as usual.  Then it starts dlprof._auto, which never raises
into the job.
"""
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain():
    paths = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None or not spec.origin:
        return
    if os.path.dirname(os.path.abspath(spec.origin)) == _HERE:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:      # noqa: BLE001 - as site.py reports a failing sitecustomize
        print("Error in sitecustomize (%s); set PYTHONVERBOSE for traceback:\n%s: %s"
              % (spec.origin, type(exc).__name__, exc), file=sys.stderr)


def _boot():
    try:
        import dlprof._auto as auto
    except ImportError:
        # The package this folder belongs to, wherever the job's path leaves it.
        sys.path.append(os.path.dirname(os.path.dirname(_HERE)))
        try:
            import dlprof._auto as auto
        except ImportError as exc:
            print("dlprof: the zero-touch bootstrap cannot import dlprof: %s" % exc, file=sys.stderr)
            return
    try:
        auto.boot()
    except Exception as exc:      # noqa: BLE001 - the job must run
        print("dlprof: the zero-touch bootstrap failed; the job runs without dlprofd: %r" % exc, file=sys.stderr)


_chain()
_boot()
