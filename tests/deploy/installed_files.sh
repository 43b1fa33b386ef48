#!/bin/sh
# The files `make install` puts on a node, not the source tree's: the build
# is installed into a scratch DESTDIR and what landed there is checked.  No
# installed text file keeps a configure-style placeholder (@name@) that
# dlprof_edit failed to fill; the slurm.conf lines the Slurm hooks print in
# their headers name the paths the hooks were installed at, and the programs
# they call are installed where they look for them.  TAP output.

B=${DLPROF_BUILDDIR:-.}

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlprof-install.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root

echo "1..6"

# The test runs inside `make check`, which finds everything already built.
# The outer make's MAKEFLAGS name its job server's pipe, but make closes
# those descriptors for a recipe that is not a sub-make: an inner make that
# trusted them read whatever file took those numbers ("read jobs pipe: Bad
# file descriptor" in CI).  So the inner make runs without them.
if env -u MAKEFLAGS -u MFLAGS ${MAKE:-make} -C "$B" install DESTDIR="$root" >"$tmp/install.out" 2>&1; then
	ok "make install DESTDIR=... succeeds"
else
	tail -30 "$tmp/install.out" | sed 's/^/# /'
	not_ok "make install DESTDIR=... succeeds"
	exit 1
fi

# Every installed text file (grep -I skips binaries), not only the ones a
# test knows about.
left=$(cd "$root" && grep -rIl '@[A-Za-z_][A-Za-z0-9_]*@' . 2>/dev/null)
if [ -z "$left" ]; then
	ok "no installed text file keeps an @placeholder@"
else
	for f in $left; do
		grep -n '@[A-Za-z_][A-Za-z0-9_]*@' "$root/$f" | sed "s|^|# ${f#./}:|"
	done
	not_ok "no installed text file keeps an @placeholder@"
fi

# The hooks tell the admin what to put in slurm.conf: that path must be
# where the hook is installed.
hook_line() { # installed file name, slurm.conf key
	f=$(find "$root" -type f -name "$1" | head -n 1)
	if [ -z "$f" ]; then
		not_ok "$1 is installed"
		return
	fi
	path=$(sed -n "s/^#[[:space:]]*$2=\([^[:space:]]*\).*/\1/p" "$f" | head -n 1)
	if [ -n "$path" ] && [ "$root$path" = "$f" ] && [ -x "$f" ]; then
		ok "$1 prints $2=$path, where it is installed"
	else
		echo "# $2 line says '${path}', installed at ${f#"$root"}"
		not_ok "$1 prints $2=<its installed path>"
	fi
}
hook_line dlprof-taskprolog TaskProlog
hook_line dlprof-epilog Epilog

# The Epilog ends jobs with dlprofctl: the one installed beside it.
f=$(find "$root" -type f -name dlprof-epilog | head -n 1)
ctl=$(sed -n 's/^dlprofctl=//p' "$f" 2>/dev/null)
if [ -n "$ctl" ] && [ -x "$root$ctl" ]; then
	ok "the Epilog calls the installed dlprofctl ($ctl)"
else
	not_ok "the Epilog calls the installed dlprofctl ('$ctl')"
fi

# The example plugstack.conf names the SPANK plugin where it is installed
# (when this build has one).
plug=$(find "$root" -type f -name plugstack.conf | head -n 1)
so=$(sed -n 's/^[a-z]*[[:space:]]\{1,\}\(\/[^[:space:]]*dlprof_spank\.so\).*/\1/p' "$plug" 2>/dev/null | head -n 1)
if [ -z "$(find "$root" -name dlprof_spank.so)" ]; then
	ok "plugstack.conf names the installed plugin # SKIP this build has no SPANK plugin"
elif [ -n "$so" ] && [ -f "$root$so" ]; then
	ok "plugstack.conf names the installed plugin ($so)"
else
	not_ok "plugstack.conf names the installed plugin ('$so')"
fi

exit $failed
