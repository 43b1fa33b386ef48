/*
 * Implementation of ctl_run.h.  Ranks are forked children of dlprofctl,
 * in its process group, so a Ctrl-C reaches them all and discovery counts
 * them as the job's processes (they descend from the pid it registered).
 */
#include "ctl_run.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Prints where the dlprof client's bootstrap folder is for the interpreter that runs it (empty: no client). */
static const char boot_probe[] =
	"import importlib.util as u, os\n"
	"s = u.find_spec('dlprof')\n"
	"print(os.path.join(os.path.dirname(s.origin), '_boot') if s and s.origin else '')\n";

/* Turns each srun task's Slurm variables into the env:// ones before the command runs. */
static const char slurm_shim[] =
	"export RANK=\"$SLURM_PROCID\" LOCAL_RANK=\"$SLURM_LOCALID\" WORLD_SIZE=\"$SLURM_NTASKS\"; exec \"$@\"";

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *ctl_run_workload(char *const *cmd, char *buf, size_t len)
{
	const char *prog = base(cmd[0]), *name = prog;
	size_t n;

	if (strncmp(prog, "python", 6) == 0 && cmd[1] && cmd[1][0] != '-')
		name = base(cmd[1]);
	snprintf(buf, len, "%s", *name ? name : "job");
	n = strlen(buf);
	if (n > 3 && strcmp(buf + n - 3, ".py") == 0)
		buf[n - 3] = '\0';
	return buf;
}

/* The interpreter cmd runs: its own when it is a Python, else python3 (a shell script that starts one). */
static const char *interpreter(char *const *cmd)
{
	return strncmp(base(cmd[0]), "python", 6) == 0 ? cmd[0] : "python3";
}

/* Runs python -c boot_probe with stdout into buf; 0 when it exited 0. */
static int probe(const char *python, char *buf, size_t len)
{
	int fd[2], st = 0;
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	if (pipe(fd) != 0)
		return -1;
	fflush(NULL);
	if ((pid = fork()) == 0) {
		close(fd[0]);
		dup2(fd[1], STDOUT_FILENO);
		close(fd[1]);
		execlp(python, python, "-c", boot_probe, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (pid > 0 && n + 1 < len && ((got = read(fd[0], buf + n, len - 1 - n)) > 0 || (got < 0 && errno == EINTR)))
		n += got > 0 ? (size_t)got : 0;
	buf[n] = '\0';
	close(fd[0]);
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	buf[strcspn(buf, "\n")] = '\0';
	return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int ctl_run_bootstrap(char *const *cmd)
{
	char dir[4096], file[4200], *path;
	const char *python = interpreter(cmd), *old = getenv("PYTHONPATH");
	size_t len;

	if (probe(python, dir, sizeof(dir)) != 0 || dir[0] == '\0') {
		fprintf(stderr, "dlprofctl run: %s cannot import the dlprof client, so the job runs without its zero-touch "
			"reporting (install it: pip install ./client/python, or the python3-dlprof package)\n", python);
		return -1;
	}
	snprintf(file, sizeof(file), "%s/sitecustomize.py", dir);
	if (access(file, R_OK) != 0) {
		fprintf(stderr, "dlprofctl run: %s: %s; the job runs without zero-touch reporting\n", file, strerror(errno));
		return -1;
	}
	len = strlen(dir) + (old && *old ? strlen(old) + 1 : 0) + 1;
	if (!(path = malloc(len)))
		return -1;
	snprintf(path, len, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
	setenv("PYTHONPATH", path, 1);
	free(path);
	/* The ranks' sessions leave the job's end to the launcher, which waits for their exit statuses. */
	setenv("DLPROF_LAUNCHER", "dlprofctl", 1);
	return 0;
}

int ctl_run_free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static void setenv_int(const char *name, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	setenv(name, buf, 1);
}

/* The child's exec of rank (or of the srun step); never returns. */
static void exec_rank(char *const *cmd, int rank, int ranks, int slurm)
{
	size_t n = 0, i;
	char **argv, ntasks[32];

	if (!slurm) {
		setenv_int("RANK", rank);
		setenv_int("LOCAL_RANK", rank);
		setenv_int("WORLD_SIZE", ranks);
		setenv_int("LOCAL_WORLD_SIZE", ranks);
		execvp(cmd[0], cmd);
		fprintf(stderr, "dlprofctl run: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	while (cmd[n])
		n++;
	if (!(argv = calloc(n + 8, sizeof(*argv))))
		_exit(127);
	i = 0;
	argv[i++] = "srun";
	if (ranks > 0) {
		snprintf(ntasks, sizeof(ntasks), "--ntasks=%d", ranks);
		argv[i++] = ntasks;
	}
	argv[i++] = "--kill-on-bad-exit=1";
	argv[i++] = "sh";
	argv[i++] = "-c";
	argv[i++] = (char *)slurm_shim;
	argv[i++] = "dlprof-rank";
	memcpy(argv + i, cmd, (n + 1) * sizeof(*argv));
	execvp("srun", argv);
	fprintf(stderr, "dlprofctl run: srun: %s\n", strerror(errno));
	_exit(127);
}

static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

int ctl_run_ranks(char *const *cmd, int ranks, int slurm)
{
	int procs = slurm ? 1 : ranks, i, started = 0, rc = 0, st;
	pid_t *pids = calloc((size_t)procs, sizeof(*pids));

	if (!pids) {
		fprintf(stderr, "dlprofctl run: out of memory\n");
		return -1;
	}
	fflush(NULL);
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			exec_rank(cmd, i, ranks, slurm);
		if (pids[i] < 0) {
			fprintf(stderr, "dlprofctl run: fork: %s\n", strerror(errno));
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (rc == 0)
			rc = status_of(st);
	}
	free(pids);
	return started == procs ? rc : (started ? (rc ? rc : 1) : -1);
}
