#!/bin/sh
# The systemd files as built: the generated unit carries the configured
# paths and the sandbox the deployment promises, passes `systemd-analyze
# verify` and scores at most 2.0 in `systemd-analyze security --offline`;
# the sysusers and tmpfiles snippets create the user and directories in a
# scratch root; the example dlprofd.conf documents every key the daemon
# knows, with defaults the daemon accepts.  TAP output.

B=${DLPROF_BUILDDIR:-.}
S=${DLPROF_SRCDIR:-.}
UNIT=$B/systemd/dlprofd.service
CONF=$B/systemd/dlprofd.conf
DAEMON=$B/daemon/dlprofd
MAX_EXPOSURE=2.0

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlprof-unit.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "1..15"

check "generated unit exists" test -s "$UNIT"
check "no placeholder left in the unit" sh -c "! grep -n '@[a-zA-Z_]*@' '$UNIT'"

# Each directive the deployment issue asks for, with its value.
missing=
for want in 'Type=notify' 'WatchdogSec=' 'Restart=on-failure' 'User=dlprofd' \
	'StateDirectory=dlprofd' 'RuntimeDirectory=dlprofd' 'ConfigurationDirectory=dlprofd' \
	'ProtectSystem=strict' 'ProtectHome=' 'NoNewPrivileges=yes' 'PrivateTmp=yes' \
	'ProtectKernelTunables=yes' 'ProtectControlGroups=yes' 'RestrictAddressFamilies=' \
	'SystemCallFilter=@system-service' \
	'CapabilityBoundingSet=CAP_PERFMON CAP_SYS_PTRACE' \
	'AmbientCapabilities=CAP_PERFMON CAP_SYS_PTRACE'; do
	grep -q "^$want" "$UNIT" || missing="$missing $want"
done
if [ -z "$missing" ]; then ok "unit has every required directive"
else echo "# missing:$missing"; not_ok "unit has every required directive"; fi

# CAP_SYS_PTRACE must not reach other processes' memory: those calls are filtered.
check "cross-process memory calls are filtered out" \
	grep -q '^SystemCallFilter=~.*process_vm_readv process_vm_writev' "$UNIT"

# ExecStart names the installed daemon and the configured config file.
check "ExecStart runs the daemon in the foreground with its config file" \
	grep -q '^ExecStart=/.*/dlprofd --foreground --config /.*/dlprofd/dlprofd.conf$' "$UNIT"

if command -v systemd-analyze >/dev/null 2>&1; then
	# verify checks that ExecStart exists: point it at the built daemon.
	sed "s|^ExecStart=[^ ]*|ExecStart=$(cd "$B" && pwd)/daemon/dlprofd|" "$UNIT" > "$tmp/dlprofd.service"
	if [ -x "$DAEMON" ]; then
		if systemd-analyze verify --man=no "$tmp/dlprofd.service" > "$tmp/verify.out" 2>&1 \
			&& ! grep -q . "$tmp/verify.out"; then
			ok "systemd-analyze verify is clean"
		else
			sed 's/^/# /' "$tmp/verify.out"; not_ok "systemd-analyze verify is clean"
		fi
	else
		skip "systemd-analyze verify is clean" "daemon not built"
	fi
	systemd-analyze security --offline=yes "$tmp/dlprofd.service" > "$tmp/sec.out" 2>&1
	score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$tmp/sec.out")
	echo "# exposure score: ${score:-?} (threshold $MAX_EXPOSURE)"
	grep '^✗' "$tmp/sec.out" | sed 's/^/#   /'
	if [ -n "$score" ] && awk "BEGIN { exit !($score <= $MAX_EXPOSURE) }"; then
		ok "security exposure $score <= $MAX_EXPOSURE"
	else
		not_ok "security exposure ${score:-unknown} <= $MAX_EXPOSURE"
	fi
else
	skip "systemd-analyze verify is clean" "no systemd-analyze"
	skip "security exposure <= $MAX_EXPOSURE" "no systemd-analyze"
fi

# sysusers and tmpfiles in a scratch root (chown needs root).
root=$tmp/root
mkdir -p "$root/etc"
if [ "$(id -u)" -ne 0 ]; then
	skip "sysusers creates the dlprofd user" "needs root"
elif command -v systemd-sysusers >/dev/null 2>&1; then
	check "sysusers creates the dlprofd user" \
		sh -c "systemd-sysusers --root='$root' '$B/systemd/sysusers.d/dlprofd.conf' >/dev/null 2>&1 \
			&& grep -q '^dlprofd:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$' '$root/etc/passwd'"
else
	skip "sysusers creates the dlprofd user" "no systemd-sysusers"
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "tmpfiles creates the state directory" "needs root"
	skip "tmpfiles creates the runtime directory" "needs root"
elif command -v systemd-tmpfiles >/dev/null 2>&1 && [ -s "$root/etc/passwd" ]; then
	uid=$(sed -n 's/^dlprofd:x:\([0-9]*\):.*/\1/p' "$root/etc/passwd")
	systemd-tmpfiles --root="$root" --create "$B/systemd/tmpfiles.d/dlprofd.conf" >/dev/null 2>&1
	check "tmpfiles creates the state directory, 0750, owned by dlprofd" \
		sh -c "[ \"\$(stat -c '%a %u' '$root/var/lib/dlprofd')\" = '750 $uid' ]"
	check "tmpfiles creates the runtime directory, 0755, owned by dlprofd" \
		sh -c "[ \"\$(stat -c '%a %u' '$root/run/dlprofd')\" = '755 $uid' ]"
else
	skip "tmpfiles creates the state directory" "no systemd-tmpfiles or sysusers"
	skip "tmpfiles creates the runtime directory" "no systemd-tmpfiles or sysusers"
fi

# The example configuration.
check "example dlprofd.conf is generated without placeholders" \
	sh -c "test -s '$CONF' && ! grep -n '@[a-zA-Z_]*@' '$CONF'"
if [ -x "$DAEMON" ]; then
	check "the daemon accepts the example as shipped (all commented)" \
		sh -c "'$DAEMON' --check-config --config '$CONF' >/dev/null"
	# Every key uncommented with its documented default must parse too.
	sed -n 's/^#\([a-z_]* = .*\)$/\1/p; s/^#\([a-z_]* =\)$/\1/p; /^\[/p' "$CONF" > "$tmp/all.conf"
	check "the daemon accepts every documented key with its documented default" \
		sh -c "'$DAEMON' --check-config --config '$tmp/all.conf' >/dev/null"
	# Every key the daemon knows (from --help) is documented.
	undocumented=
	for key in $("$DAEMON" --help | sed -n 's/^  --\([a-z-]*\) .*(default .*/\1/p' | tr - _); do
		grep -q "^#$key =" "$CONF" || undocumented="$undocumented $key"
	done
	if [ -z "$undocumented" ]; then ok "every configuration key is documented"
	else echo "# undocumented:$undocumented"; not_ok "every configuration key is documented"; fi
	# The documented defaults are the daemon's own.
	wrong=
	"$DAEMON" --help | sed -n 's/^  --\([a-z-]*\) .*(default "\(.*\)")$/\1 \2/p' > "$tmp/defaults"
	while read -r key def; do
		key=$(echo "$key" | tr - _)
		doc=$(sed -n "s/^#$key = *//p" "$CONF" | head -n 1)
		[ "$doc" = "$def" ] || awk "BEGIN { exit !(\"$doc\" + 0 == \"$def\" + 0 && \"$def\" ~ /^[0-9.]+\$/) }" \
			|| wrong="$wrong $key($doc!=$def)"
	done < "$tmp/defaults"
	if [ -z "$wrong" ]; then ok "documented defaults match the daemon's"
	else echo "# differ:$wrong"; not_ok "documented defaults match the daemon's"; fi
else
	for d in "example accepted as shipped" "every documented key accepted" \
		"every key documented" "documented defaults match"; do
		skip "$d" "daemon not built"
	done
fi

exit $failed
