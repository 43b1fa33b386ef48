# dlprofctl: the command-line client of the daemon (HTTP and the Unix socket
# through libcurl, JSON through jansson), and its tests against the real
# daemon.

bin_PROGRAMS += tools/dlprofctl
tools_dlprofctl_SOURCES = \
	tools/dlprofctl.c \
	tools/ctl_http.c tools/ctl_http.h \
	tools/ctl_table.c tools/ctl_table.h \
	tools/ctl_format.c tools/ctl_format.h \
	tools/ctl_report.c tools/ctl_report.h \
	tools/ctl_goodput.c tools/ctl_goodput.h \
	tools/ctl_run.c tools/ctl_run.h \
	tools/ctl_cluster.c tools/ctl_cluster.h \
	tools/ctl_export.c tools/ctl_export.h
tools_dlprofctl_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS)
tools_dlprofctl_LDADD = $(CURL_LIBS) $(JANSSON_LIBS)

TESTS += tests/deploy/dlprofctl.py tests/deploy/dlprofctl_run.py
EXTRA_DIST += tests/deploy/dlprofctl.py tests/deploy/dlprofctl_run.py
