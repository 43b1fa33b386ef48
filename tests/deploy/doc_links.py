"""The documents' links stay inside the repository and lead somewhere.

Every relative link in the Markdown files of the source tree (README.md,
docs/, client/, contrib/, bench/...) must name a file or directory inside
the tree that exists.  Run from `make distcheck`, the tree is the unpacked
tarball, so the same check proves `make dist` ships what the documents
link to.  TAP output.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import SRCDIR, Tap  # noqa: E402

LINK = re.compile(r"\]\(([^)\s]+)\)")
SKIP_DIRS = {"node_modules", "build", "_build", "deb-build", ".git", "autom4te.cache"}

tap = Tap()
top = os.path.realpath(SRCDIR)
docs = []
for d, dirs, files in os.walk(top):
    dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("dlprofd-")]
    docs += [os.path.join(d, f) for f in files if f.endswith(".md")]


@tap.test("README.md links docs/ARCHITECTURE.md")
def _():
    with open(os.path.join(top, "README.md")) as f:
        assert "](docs/ARCHITECTURE.md)" in f.read()


for doc in sorted(docs):
    name = os.path.relpath(doc, top)

    @tap.test("%s: relative links stay in the tree and exist" % name)
    def _():
        with open(doc) as f:
            text = f.read()
        bad = []
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue   # a URL or an anchor in the same page
            path = os.path.realpath(os.path.join(os.path.dirname(doc), target.split("#")[0]))
            if not (path == top or path.startswith(top + os.sep)):
                bad.append("%s leaves the repository" % target)
            elif not os.path.exists(path):
                bad.append("%s does not exist" % target)
        assert not bad, bad

tap.done()
