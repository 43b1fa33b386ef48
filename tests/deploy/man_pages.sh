#!/bin/sh
# The manual pages as built: they format without groff warnings, carry no
# unfilled placeholder, and stay in step with the programs: every
# configuration key the daemon knows is in dlprofd.conf(5) and dlprofd(8),
# every dlprofctl command and option is in dlprofctl(1).  TAP output.

B=${DLPROF_BUILDDIR:-.}
DAEMON=$B/daemon/dlprofd
CTL=$B/tools/dlprofctl
PAGES="dlprofd.8 dlprofd.conf.5 dlprofctl.1"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

echo "1..8"

for p in $PAGES; do
	f=$B/man/$p
	if [ ! -s "$f" ]; then not_ok "$p is built"; continue; fi
	if grep -n '@[a-zA-Z_]*@' "$f"; then not_ok "$p is built, placeholders filled"
	else ok "$p is built, placeholders filled"; fi
done

for p in $PAGES; do
	if ! command -v groff >/dev/null 2>&1; then skip "$p formats cleanly" "no groff"; continue; fi
	out=$(groff -man -ww -z "$B/man/$p" 2>&1)
	if [ -z "$out" ]; then ok "$p formats cleanly"
	else echo "$out" | sed 's/^/# /'; not_ok "$p formats cleanly"; fi
done

# Names in roff source: dashes are written \- .
in_page() { sed 's/\\-/-/g' "$B/man/$1" | grep -q -- "$2"; }

if [ -x "$DAEMON" ]; then
	missing=
	for key in $("$DAEMON" --help | sed -n 's/^  --\([a-z-]*\) .*(default .*/\1/p'); do
		under=$(echo "$key" | tr - _)
		in_page dlprofd.conf.5 "^\.B[IR]* $under " || missing="$missing $under(5)"
		in_page dlprofd.8 "--$key" || missing="$missing --$key(8)"
	done
	if [ -z "$missing" ]; then ok "every configuration key is in dlprofd.conf(5) and dlprofd(8)"
	else echo "# missing:$missing"; not_ok "every configuration key is in dlprofd.conf(5) and dlprofd(8)"; fi
else
	skip "every configuration key is in the manual" "daemon not built"
fi

if [ -x "$CTL" ]; then
	missing=
	help=$("$CTL" --help)
	for word in $(echo "$help" | sed -n 's/^  \([a-z]*\) .*/\1/p') \
		$(echo "$help" | grep -o -- '--[a-z-]*' | sort -u); do
		in_page dlprofctl.1 "$word" || missing="$missing $word"
	done
	if [ -z "$missing" ]; then ok "every dlprofctl command and option is in dlprofctl(1)"
	else echo "# missing:$missing"; not_ok "every dlprofctl command and option is in dlprofctl(1)"; fi
else
	skip "every dlprofctl command and option is in dlprofctl(1)" "dlprofctl not built"
fi

exit $failed
