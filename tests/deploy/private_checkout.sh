#!/bin/sh
# No test may depend on the checkout's path or permissions: a newcomer's
# clone under `mktemp -d` or a home directory (0700) must pass.  Only a
# child run as another uid can trip on that, so every suite that switches
# uids (found by what it calls: setuid, setpriv, the harness's as_uid; a
# preexec_fn that only enters a cgroup switches none) is run again with the
# source and build trees seen through a 0700 directory, bind mounted in a
# private mount namespace; each must pass there too.  Needs root (unshare,
# mount); each case is skipped, saying so, otherwise.  TAP output.

S=$(cd "${DLPROF_SRCDIR:-.}" && pwd)
B=$(cd "${DLPROF_BUILDDIR:-.}" && pwd)

# The suites that run children as another uid, by their source (the
# harness's as_uid among them); a module the suites import is not a suite.
suites=
for t in $(cd "$S" && grep -rlE 'os\.setuid|setpriv|as_uid\(' tests --include='*.py' --include='*.sh' \
	--exclude-dir=node_modules | grep -v '^tests/deploy/private_checkout.sh$' | sort); do
	case $t in
	*.py) (cd "$S" && grep -rqE "^(from|import) $(basename "$t" .py)( |$)" tests --include='*.py') && continue ;;
	esac
	suites="$suites $t"
done

# A case per suite and one for finding them: all reported skipped where this cannot run.
echo "1..$(($(echo "$suites" | wc -w) + 1))"
skip_all() {
	n=0
	for t in "found the suites that switch uids" $suites; do
		n=$((n + 1))
		echo "ok $n - $t # SKIP $1"
	done
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a mount namespace)"
command -v unshare >/dev/null 2>&1 || skip_all "no unshare (util-linux)"
unshare -m sh -c 'mount -t tmpfs tmpfs /mnt' 2>/dev/null || skip_all "cannot make a mount namespace here"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlprof-private.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
chmod 0700 "$tmp"
mkdir "$tmp/src" "$tmp/build"
case $B in
"$S"/*) pb=$tmp/src/${B#"$S"/} ;;
*) pb=$tmp/build ;;
esac

n=1
if [ -n "$suites" ]; then
	echo "ok 1 - found the suites that switch uids: $(echo $suites)"
else
	echo "not ok 1 - found the suites that switch uids"
fi

failed=0
for t in $suites; do
	n=$((n + 1))
	case $t in *.py) run=/usr/bin/python3 ;; *) run=/bin/sh ;; esac
	# $1 source, $2 its view, $3 build, $4 its view (or ""), then the command.
	unshare -m sh -c '
		mount --bind "$1" "$2" || exit 97
		[ -z "$4" ] || mount --bind "$3" "$4" || exit 97
		shift 4
		exec "$@"' sh "$S" "$tmp/src" "$B" "$([ "$pb" = "$tmp/build" ] && echo "$pb")" \
		env DLPROF_SRCDIR="$tmp/src" DLPROF_BUILDDIR="$pb" "$run" "$tmp/src/$t" \
		>"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && grep -qE '^ok' "$tmp/out" && ! grep -q '^not ok' "$tmp/out"; then
		echo "ok $n - $t passes from a checkout under a 0700 directory"
	else
		failed=1
		grep -E '^not ok|^#' "$tmp/out" | head -40 | sed 's/^/# /'
		[ "$rc" -eq 0 ] || tail -5 "$tmp/out" | sed 's/^/# /'
		echo "not ok $n - $t passes from a checkout under a 0700 directory (exit $rc)"
	fi
done
exit $failed
