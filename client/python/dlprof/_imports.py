"""Running code right after a module is first imported, before the importer uses it.

The zero-touch path opens its session when the interpreter starts, before
the job imports torch; torch must get its inter-op thread count and the
automatic hooks before the job's first line that uses it.  A finder at the
front of sys.meta_path notices the import of the watched top-level module,
asks the other finders for the module, and wraps its loader so the
callback runs once the module has executed.  The finder removes itself
after that one import; a module already imported gets the callback at
once.  Nothing from importlib is imported: every Python process of a job
loads this module at start-up.
"""

import sys


class _AfterExec:
    """A loader that runs callback(module) after the wrapped loader executed it."""

    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._callback(module)
        except Exception as exc:      # noqa: BLE001 - the job's import must succeed
            import logging
            logging.getLogger("dlprof").warning("dlprof: internal error after importing %s; the job runs on: %r",
                                                module.__name__, exc)

    def __getattr__(self, name):      # get_resource_reader, is_package, ... of the real loader
        return getattr(self._loader, name)


class _Watch:
    """A meta path finder for one module name."""

    def __init__(self, name, callback):
        self._name = name
        self._callback = callback
        self._finding = False

    def find_spec(self, fullname, path=None, target=None):
        # A spec is also asked for without importing (importlib.util.find_spec, to test for torch):
        # the watch stays until a module it found is executed.
        if fullname != self._name or self._finding:
            return None
        self._finding = True
        try:
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None) if finder is not self else None
                spec = find(fullname, path, target) if find is not None else None
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._finding = False
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _AfterExec(spec.loader, self._executed)
        return spec

    def _executed(self, module):
        self.remove()
        self._callback(module)

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def after_import(name, callback):
    """callback(module) once top-level module name is imported (now, if it is); returns a handle with remove()."""
    watch = _Watch(name, callback)
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
    else:
        sys.meta_path.insert(0, watch)
    return watch
