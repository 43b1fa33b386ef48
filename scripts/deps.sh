# Debian packages the build and the tests need, and a helper that installs
# the missing ones.  Sourced by scripts/run and scripts/test.

# Building and running the daemon.
DLPROF_BUILD_PACKAGES="build-essential autoconf automake libtool pkg-config
 libmicrohttpd-dev libsqlite3-dev libjemalloc-dev libjansson-dev libinih-dev
 libsystemd-dev libpapi-dev likwid libcurl4-openssl-dev libpq-dev"

# Running every suite: unit (cmocka), integration (python3), end to end
# with PyTorch on an optimized BLAS, browser (chromium + node), metrics
# checks (promtool, and a real server scraping the daemon, from
# prometheus), fuzzing (clang), the python3-dlprof package (debhelper,
# dh-python), a PostgreSQL server for the cluster store's tests, and
# Optuna, the optimizer the tuning benchmark measures the tuner against
# (bench/tuner/compare.py).
DLPROF_TEST_PACKAGES="libcmocka-dev python3 python3-torch libopenblas0-openmp python3-optuna
 sqlite3 curl procps chromium prometheus clang wrk iproute2
 python3-pip python3-setuptools python3-wheel
 slurmctld slurmd slurm-client munge libslurm-dev groff-base
 debhelper dh-python postgresql"
# A machine may already have Node.js from elsewhere (with its own npm);
# Debian's nodejs/npm would conflict with it, so only add what is missing.
command -v node >/dev/null 2>&1 || DLPROF_TEST_PACKAGES="$DLPROF_TEST_PACKAGES nodejs"
command -v npm >/dev/null 2>&1 || DLPROF_TEST_PACKAGES="$DLPROF_TEST_PACKAGES npm"

# Installs the packages given that are not installed yet.
dlprof_install_missing() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing Debian packages:$missing" >&2
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086 # word splitting of the list is intended
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
}
