#!/bin/sh
# The boundary between collectors/ and the daemon, as the build cannot hold
# it (both folders are on the include path): a collector includes only
# collectors/ headers and the daemon's two leaf utilities, log.h and array.h,
# which themselves include only system headers, and collectors/local.mk
# compiles no daemon file.  A collector that needs the
# store, the tuner or the server belongs in daemon/.  TAP output.
#
# Usage: test_layering.sh [SRCDIR]; DLPROF_SRCDIR when run by make check.

S=${1:-${DLPROF_SRCDIR:-.}}
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

echo "1..4"

if [ -d "$S/collectors" ] && [ -f "$S/daemon/log.h" ]; then
	ok "sources found under $S"
else
	not_ok "sources found under $S"
	exit 1
fi

# Every quoted include of collectors/: a file of collectors/, or log.h.
crossing=
for f in "$S"/collectors/*.c "$S"/collectors/*.h; do
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		log.h | array.h) continue ;;
		*/*) ;;
		*) [ -f "$S/collectors/$inc" ] && continue ;;
		esac
		crossing="$crossing ${f#"$S"/}:$inc"
	done
done
if [ -z "$crossing" ]; then
	ok "collectors/ includes only collectors/ headers, log.h and array.h"
else
	for c in $crossing; do echo "# crosses the boundary: $c"; done
	not_ok "collectors/ includes only collectors/ headers, log.h and array.h"
fi

# log.h and array.h are shared by both sides: they pull in nothing of the daemon's.
if grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$S/daemon/log.h" "$S/daemon/array.h" \
	"$S/daemon/array.c" | grep -v '"array.h"' | sed 's/^/# /' | grep .; then
	not_ok "daemon/log.h and daemon/array.[ch] include only system headers"
else
	ok "daemon/log.h and daemon/array.[ch] include only system headers"
fi

# The fragment's build lines (comments aside) name no daemon source.
if grep -v '^[[:space:]]*#' "$S/collectors/local.mk" | grep -n 'daemon/[A-Za-z0-9_]*\.[ch]\b' | sed 's/^/# /' | grep .; then
	not_ok "collectors/local.mk compiles no daemon file"
else
	ok "collectors/local.mk compiles no daemon file"
fi
exit $failed
