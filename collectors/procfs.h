/*
 * Parsers for the /proc files the collectors and job discovery read, and
 * small helpers to read them under a configurable root.  The parsers take
 * text and fill structs: no I/O, so they are tested on fixture files copied
 * from a real /proc.
 */
#ifndef DLPROF_PROCFS_H
#define DLPROF_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat (or .../task/TID/stat) dlprofd uses. */
struct procfs_stat {
	char comm[64];                 /* without the parentheses */
	char state;
	pid_t ppid;
	unsigned long long minflt;     /* whole process when read from /proc/PID/stat */
	unsigned long long majflt;
	unsigned long long utime;      /* clock ticks */
	unsigned long long stime;
	long num_threads;
	unsigned long long starttime;  /* clock ticks after boot */
	long long rss_pages;
	int processor;                 /* CPU it last ran on */
};

/* The cpu line of /proc/stat, in clock ticks, and the boot time. */
struct procfs_cpu {
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
	long long btime;               /* unix seconds at boot; -1 if absent */
	int ncpu;                      /* cpuN lines */
};

/* /proc/PID/task/TID/schedstat: what the scheduler counted for one thread. */
struct procfs_schedstat {
	unsigned long long cpu_ns;     /* time on a CPU */
	unsigned long long wait_ns;    /* time runnable but waiting for a CPU */
	unsigned long long slices;     /* times it was put on a CPU */
};

struct procfs_mem {
	long long total_kb;
	long long available_kb;
	long long free_kb;
};

struct procfs_load {
	double load1, load5, load15;
	long running;                  /* runnable scheduling entities */
	long total;
};

int procfs_parse_stat(const char *text, struct procfs_stat *out);
int procfs_parse_cpu(const char *text, struct procfs_cpu *out);
int procfs_parse_schedstat(const char *text, struct procfs_schedstat *out);
int procfs_parse_meminfo(const char *text, struct procfs_mem *out);
int procfs_parse_loadavg(const char *text, struct procfs_load *out);
/* The value of "key:" in a status file, as an integer; -1 when absent. */
long long procfs_status_int(const char *text, const char *key);
/* Copies the value of "key:" (trimmed) into buf; -1 when absent. */
int procfs_status_str(const char *text, const char *key, char *buf, size_t len);
/* Number of CPUs in a list such as "0-3,8,10-11"; -1 when malformed. */
int procfs_cpulist_count(const char *list);
/* Fills mask[cpu] = 1 for each CPU in the list (CPUs >= max ignored); -1 when malformed. */
int procfs_cpulist_mask(const char *list, unsigned char *mask, int max);
/* Finds NAME=value in an environ block (NUL-separated); copies value; -1 if absent. */
int procfs_environ_get(const char *env, size_t len, const char *name, char *buf, size_t buflen);

/*
 * Reads a whole small file into buf (NUL-terminated).  Returns the bytes
 * read or -1 with errno set; never logs (a vanished process is normal).
 */
ssize_t procfs_read(const char *path, char *buf, size_t len);
/* Same, path built printf-style. */
ssize_t procfs_readf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Opens a file (path built printf-style) to be read again and again with
 * procfs_reread: procfs writes a file's text afresh at offset 0 for each
 * read, and a descriptor of a /proc/PID file never reads another process
 * after the pid is reused, so a sampler keeps them open and saves the path
 * lookup (five times the read on a VM).  Returns the descriptor or -1.
 */
int procfs_openf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reads a kept-open file from its start into buf (NUL-terminated), as procfs_read. */
ssize_t procfs_reread(int fd, char *buf, size_t len);

/*
 * The numeric entries of a directory (pids under /proc, tids under
 * /proc/PID/task), ascending, in a malloc'd array.  Returns the count, or -1
 * with errno set.
 */
ssize_t procfs_list_ids(const char *dir, pid_t **out);

/* Clock ticks per second and page size, read once. */
long procfs_hz(void);
long procfs_page_size(void);

#endif
