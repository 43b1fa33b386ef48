/*
 * The workload for the sampling benchmarks: J processes of T threads each,
 * standing in for running training jobs.  Every thread wakes every P ms and
 * does a few microseconds of work, so each has CPU time and context
 * switches to sample while the machine stays nearly idle.  The runner
 * registers each pid with dlprofd.
 *
 *   spawn_jobs [--jobs 50] [--threads 8] [--period-ms 100] [--work-us 20]
 *
 * Prints each job's pid on its own line once all its threads run, then
 * "ready"; runs until stdin closes or SIGTERM/SIGINT, then ends the jobs.
 * The jobs die with it (PR_SET_PDEATHSIG) if it is killed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct opts {
	int jobs, threads;
	long period_ms, work_us;
};

static void spin_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *worker(void *arg)
{
	const struct opts *o = arg;
	struct timespec pause = {o->period_ms / 1000, (o->period_ms % 1000) * 1000000L};

	for (;;) {
		spin_us(o->work_us);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* The job: T-1 more threads, a byte on ready_fd when they run, then work. */
static void job_main(const struct opts *o, int ready_fd)
{
	pthread_t t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 1; i < o->threads; i++)
		if (pthread_create(&t, NULL, worker, (void *)o) != 0)
			_exit(1);
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	close(ready_fd);
	worker((void *)o);
}

int main(int argc, char **argv)
{
	struct opts o = {50, 8, 100, 20};
	pid_t *pids;
	sigset_t set;
	int fds[2], started = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--jobs") == 0)
			o.jobs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--threads") == 0)
			o.threads = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--period-ms") == 0)
			o.period_ms = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--work-us") == 0)
			o.work_us = atol(argv[i + 1]);
	}
	if (o.jobs < 1 || o.threads < 1 || o.period_ms < 1 || !(pids = calloc((size_t)o.jobs, sizeof(*pids)))) {
		fprintf(stderr, "usage: spawn_jobs [--jobs N] [--threads T] [--period-ms P] [--work-us W]\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < o.jobs; i++) {
		char c;
		if (pipe(fds) < 0)
			break;
		pids[i] = fork();
		if (pids[i] == 0) {
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			close(fds[0]);
			job_main(&o, fds[1]);
		}
		close(fds[1]);
		if (pids[i] < 0 || read(fds[0], &c, 1) != 1) {
			close(fds[0]);
			break;
		}
		close(fds[0]);
		printf("%d\n", (int)pids[i]);
		started++;
	}
	printf("%s\n", started == o.jobs ? "ready" : "failed");
	fflush(stdout);
	/* Until stdin closes or a signal: poll stdin, check signals each 100 ms. */
	for (;;) {
		struct pollfd p = {.fd = 0, .events = POLLIN};
		struct timespec zero = {0, 0};
		char buf[64];
		if (sigtimedwait(&set, NULL, &zero) > 0)
			break;
		if (poll(&p, 1, 100) > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
	}
	for (int i = 0; i < started; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < started; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	free(pids);
	return started == o.jobs ? 0 : 1;
}
