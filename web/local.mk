# The dashboard: static files installed to $(pkgdatadir)/web, and browser tests.
# One directory variable per subdirectory: nobase_ would keep the "web/"
# prefix of these paths and install under $(webdir)/web/.

webdir = $(pkgdatadir)/web
dist_web_DATA = \
	web/index.html \
	web/favicon.svg

webcssdir = $(webdir)/css
dist_webcss_DATA = \
	web/css/app.css

webjsdir = $(webdir)/js
dist_webjs_DATA = \
	web/js/api.js \
	web/js/app.js \
	web/js/charts.js \
	web/js/datatools.js \
	web/js/dom.js \
	web/js/format.js \
	web/js/heatmap.js \
	web/js/panels.js \
	web/js/story.js \
	web/js/throughput.js

webpagesdir = $(webdir)/js/pages
dist_webpages_DATA = \
	web/js/pages/cluster.js \
	web/js/pages/compare.js \
	web/js/pages/job.js \
	web/js/pages/jobs.js \
	web/js/pages/node.js \
	web/js/pages/workload.js \
	web/js/pages/workloads.js

# uPlot 1.6.32 from npm, unchanged; its MIT license is installed beside it.
webuplotdir = $(webdir)/vendor/uplot
dist_webuplot_DATA = \
	web/vendor/uplot/LICENSE \
	web/vendor/uplot/uPlot.iife.min.js \
	web/vendor/uplot/uPlot.min.css

EXTRA_DIST += web/vendor/uplot/README.md

# Browser tests: headless Debian chromium driven by playwright-core
# (npm ci --prefix tests/browser); each skips, saying why, when either is missing.
TESTS += \
	tests/browser/static.mjs \
	tests/browser/pages.mjs \
	tests/browser/safety.mjs \
	tests/browser/diagnosis.mjs \
	tests/browser/live.mjs \
	tests/browser/ranks.mjs \
	tests/browser/goodput.mjs \
	tests/browser/cluster.mjs \
	tests/browser/threads.mjs \
	tests/browser/compare.mjs \
	tests/browser/scale.mjs
# They judge the machine: the live charts follow the sampler; the heatmap draws a real
# process's spinning thread hot; fifty sampled jobs and a page of 256 threads, each wait bounded.
SERIAL_TESTS += tests/browser/live.mjs tests/browser/threads.mjs tests/browser/scale.mjs
EXTRA_DIST += \
	tests/browser/static.mjs \
	tests/browser/pages.mjs \
	tests/browser/safety.mjs \
	tests/browser/diagnosis.mjs \
	tests/browser/live.mjs \
	tests/browser/ranks.mjs \
	tests/browser/goodput.mjs \
	tests/browser/cluster.mjs \
	tests/browser/threads.mjs \
	tests/browser/compare.mjs \
	tests/browser/scale.mjs \
	tests/browser/lib/tap.mjs \
	tests/browser/lib/harness.mjs \
	tests/browser/lib/seed.mjs \
	tests/browser/lib/history.mjs \
	tests/browser/package.json \
	tests/browser/package-lock.json \
	tests/browser/.gitignore
CLEANFILES += tests/browser/screenshots/*.png
