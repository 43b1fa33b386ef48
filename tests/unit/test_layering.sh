#!/bin/sh
# The layers as the build holds them: base/ (the ground floor), collectors/
# on it, the daemon on both.  Each layer is compiled with the include paths
# of those below it only (Makefile.am), so a collector that includes a
# daemon header does not compile.  This proves it with probes compiled by
# the very commands the build uses (tests/unit/layers.env, written by make):
# the headers below are found, every header above is not, and the
# collectors' library links with base/'s alone.  What no include path can
# refuse, a quoted include that walks to another folder ("../daemon/x.h" is
# looked up beside the including file first), is checked in the sources.
# TAP output.
#
# Usage: test_layering.sh [SRCDIR [BUILDDIR]]; DLPROF_SRCDIR and
# DLPROF_BUILDDIR when run by make check.

S=${1:-${DLPROF_SRCDIR:-.}}
B=${2:-${DLPROF_BUILDDIR:-.}}
S=$(cd "$S" && pwd) || exit 1
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

echo "1..7"

if [ -f "$B/tests/unit/layers.env" ] && [ -f "$S/base/log.h" ] && [ -f "$S/collectors/collector.h" ]; then
	ok "sources under $S, the build's commands under $B"
else
	not_ok "sources under $S, the build's commands under $B (make tests/unit/layers.env)"
	exit 1
fi
# base_cc, collectors_cc (compile a layer's file), collectors_link (link its library alone)
. "$B/tests/unit/layers.env"
cd "$B" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

headers() { # folder: the header names in it
	for h in "$S/$1"/*.h; do basename "$h"; done
}

# compiles: cc, title, the headers a file includes: they all compile together.
compiles() {
	cc=$1 title=$2
	shift 2
	: >"$tmp/all.c"
	for h in "$@"; do echo "#include \"$h\"" >>"$tmp/all.c"; done
	echo 'int layering_probe(void);' >>"$tmp/all.c"
	echo 'int layering_probe(void) { return 0; }' >>"$tmp/all.c"
	# shellcheck disable=SC2086 # the build's command, split as make splits it
	if $cc -fsyntax-only "$tmp/all.c" >"$tmp/out" 2>&1; then
		ok "$title"
	else
		sed 's/^/# /' "$tmp/out" | head -20
		not_ok "$title"
	fi
}

# refused: cc, title, headers: each one alone is not found (the file does not compile).
refused() {
	cc=$1 title=$2 found=
	shift 2
	for h in "$@"; do
		echo "#include \"$h\"" >"$tmp/probe.c"
		# shellcheck disable=SC2086
		if $cc -E -o /dev/null "$tmp/probe.c" >"$tmp/out" 2>&1; then
			found="$found $h"
		elif ! grep -q "$h: No such file or directory" "$tmp/out"; then
			# Refused for another reason: the probe proves nothing.
			sed 's/^/# /' "$tmp/out" | head -5
			found="$found $h(other-error)"
		fi
	done
	if [ -z "$found" ]; then
		ok "$title ($# headers)"
	else
		echo "# found:$found"
		not_ok "$title"
	fi
}

# The controls: a probe that fails for an unrelated reason would prove nothing.
# shellcheck disable=SC2046 # header names have no spaces
compiles "$collectors_cc" "a collector sees collectors/ and base/" $(headers collectors) $(headers base)
# shellcheck disable=SC2046
compiles "$base_cc" "base/ sees itself" $(headers base)

# shellcheck disable=SC2046
refused "$collectors_cc" "a collector that includes a daemon header does not compile" \
	$(headers daemon) daemon/store.h
# shellcheck disable=SC2046
refused "$base_cc" "base/ includes no collector or daemon header" \
	$(headers collectors) $(headers daemon) collectors/collector.h daemon/log.h

# The collectors' library, every object of it, links with base/ and the system's libraries alone.
echo 'int main(void) { return 0; }' >"$tmp/main.c"
# shellcheck disable=SC2086
if $collectors_cc -o "$tmp/alone" "$tmp/main.c" $collectors_link >"$tmp/out" 2>&1; then
	ok "collectors/libcollectors.a links against base/libbase.a alone"
else
	grep -i 'undefined\|error' "$tmp/out" | sed 's/^/# /' | head -20
	not_ok "collectors/libcollectors.a links against base/libbase.a alone"
fi

# What the include path cannot refuse: a quoted include naming another folder.
walks=
for f in "$S"/base/*.[ch] "$S"/collectors/*.[ch]; do
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in */*) walks="$walks ${f#"$S"/}:$inc" ;; esac
	done
done
if [ -z "$walks" ]; then
	ok "base/ and collectors/ name their headers without a folder"
else
	for w in $walks; do echo "# names a folder: $w"; done
	not_ok "base/ and collectors/ name their headers without a folder"
fi

exit $failed
