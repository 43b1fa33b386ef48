# The tuner: sources that go into daemon/libdlprof.a, its tests and bench.
TUNER_SOURCES = \
	daemon/knobs.c daemon/knobs.h \
	daemon/knobs_env.c daemon/knobs_env.h \
	daemon/tuner_model.c daemon/tuner_model.h \
	daemon/tuner_learner.c daemon/tuner_learner.h \
	daemon/tuner_trial.c daemon/tuner_trial.h \
	daemon/tuner_plan.c \
	daemon/tuner.c daemon/tuner.h daemon/tuner_internal.h \
	daemon/tuner_recommend.c daemon/tuner_cache.c daemon/tuner_other_class.c daemon/tuner_node.c \
	daemon/goodput_noise.c daemon/goodput_noise.h daemon/tuner_goodput.c \
	daemon/store_tuner.c daemon/store_tuner.h \
	daemon/api_workloads.c

# Unit tests of the pure parts and of the tuner over a real store.
if HAVE_CMOCKA
TUNER_TESTS = tests/unit/test_tuner_knobs tests/unit/test_tuner_learner tests/unit/test_tuner \
	tests/unit/test_tuner_other_class tests/unit/test_goodput_noise tests/unit/test_tuner_gate \
	tests/unit/test_tuner_plan tests/unit/test_tuner_goodput
check_PROGRAMS += $(TUNER_TESTS)
TESTS += $(TUNER_TESTS)
tests_unit_test_tuner_knobs_SOURCES = tests/unit/test_tuner_knobs.c
tests_unit_test_tuner_knobs_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_knobs_LDADD = $(UNIT_LDADD)
tests_unit_test_tuner_learner_SOURCES = tests/unit/test_tuner_learner.c
tests_unit_test_tuner_learner_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_learner_LDADD = $(UNIT_LDADD)
tests_unit_test_goodput_noise_SOURCES = tests/unit/test_goodput_noise.c
tests_unit_test_goodput_noise_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_goodput_noise_LDADD = $(UNIT_LDADD)
tests_unit_test_tuner_SOURCES = tests/unit/test_tuner.c
tests_unit_test_tuner_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_LDADD = $(UNIT_LDADD)
tests_unit_test_tuner_other_class_SOURCES = tests/unit/test_tuner_other_class.c
tests_unit_test_tuner_other_class_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_other_class_LDADD = $(UNIT_LDADD)
tests_unit_test_tuner_gate_SOURCES = tests/unit/test_tuner_gate.c
tests_unit_test_tuner_gate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_gate_LDADD = $(UNIT_LDADD)
tests_unit_test_tuner_plan_SOURCES = tests/unit/test_tuner_plan.c
tests_unit_test_tuner_plan_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_plan_LDADD = $(UNIT_LDADD)
tests_unit_test_tuner_goodput_SOURCES = tests/unit/test_tuner_goodput.c
tests_unit_test_tuner_goodput_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tuner_goodput_LDADD = $(UNIT_LDADD)
endif

# A job driven through the HTTP API learns a surface it never saw; restarts keep it.
TESTS += tests/integration/test_tuner.py
EXTRA_DIST += tests/integration/test_tuner.py

# objective=goodput through the API: noise figures in, raw and learning speed-up out.
TESTS += tests/integration/test_goodput.py
EXTRA_DIST += tests/integration/test_goodput.py

# The tuning benchmark (bench/tuner/README.md) runs from bench/run
# (`bench/run --only tuner-compare`), never from `make check`; the gate above
# replays a fixed subset of its surfaces: every CSV surface and the first of
# each generated family (tests/fixtures/tuner-gate, from gen_surfaces.py --gate).
BENCH_TUNER_SURFACES = \
	bench/tuner/surfaces/gpu-k80-aws-dist-resnet50-efficiency.csv \
	bench/tuner/surfaces/gpu-k80-aws-vgg16-efficiency.csv \
	bench/tuner/surfaces/gpu-k80-gce-inception3.csv \
	bench/tuner/surfaces/gpu-k80-gce-resnet50.csv \
	bench/tuner/surfaces/syn-affinity.csv \
	bench/tuner/surfaces/syn-cliff.csv \
	bench/tuner/surfaces/syn-interact.csv \
	bench/tuner/surfaces/syn-noisy.csv \
	bench/tuner/surfaces/syn-plateau.csv \
	bench/tuner/surfaces/torch-cnn-infer-b32.csv \
	bench/tuner/surfaces/torch-cnn-infer-b4.csv \
	bench/tuner/surfaces/torch-lstm-train-b64.csv \
	bench/tuner/surfaces/torch-lstm-train-b8.csv
TUNER_GATE_SURFACES = \
	tests/fixtures/tuner-gate/gen-cliff-000.csv \
	tests/fixtures/tuner-gate/gen-cliff-001.csv \
	tests/fixtures/tuner-gate/gen-cliff-002.csv \
	tests/fixtures/tuner-gate/gen-cliff-003.csv \
	tests/fixtures/tuner-gate/gen-flat-000.csv \
	tests/fixtures/tuner-gate/gen-flat-001.csv \
	tests/fixtures/tuner-gate/gen-flat-002.csv \
	tests/fixtures/tuner-gate/gen-flat-003.csv \
	tests/fixtures/tuner-gate/gen-interact-000.csv \
	tests/fixtures/tuner-gate/gen-interact-001.csv \
	tests/fixtures/tuner-gate/gen-interact-002.csv \
	tests/fixtures/tuner-gate/gen-interact-003.csv \
	tests/fixtures/tuner-gate/gen-peak-000.csv \
	tests/fixtures/tuner-gate/gen-peak-001.csv \
	tests/fixtures/tuner-gate/gen-peak-002.csv \
	tests/fixtures/tuner-gate/gen-peak-003.csv \
	tests/fixtures/tuner-gate/gen-usl-000.csv \
	tests/fixtures/tuner-gate/gen-usl-001.csv \
	tests/fixtures/tuner-gate/gen-usl-002.csv \
	tests/fixtures/tuner-gate/gen-usl-003.csv
EXTRA_DIST += bench/tuner/README.md bench/tuner/make_synthetic.py bench/tuner/gen_surfaces.py \
	bench/tuner/compare.py bench/tuner/measure_torch.py bench/tuner/recommend_latency.py \
	$(BENCH_TUNER_SURFACES) $(TUNER_GATE_SURFACES)
