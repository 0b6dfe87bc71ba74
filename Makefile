# qreport — build and test. `./build.sh` fetches the pinned dependencies into
# third_party/ and then runs `make qreport`; `make test` does both if needed.

# make predefines CC (= cc), so `CC ?= gcc` would never apply: gcc unless CC comes from the
# command line or the environment.
ifeq ($(origin CC),default)
CC      := gcc
endif
OPT     ?= -O2
# Nothing silenced: a snprintf that may cut a path checks its return value and fails.
WARN    := -Wall -Wextra -Werror
CSTD    := -std=gnu11
INC     := -Ithird_party/include -I.
LIBS    := -Lthird_party/lib -lminizip -lz -lprotobuf-c -lm -lpthread
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) $(INC) $(CFLAGS)
BUILD_FLAGS_STR = $(CC) $(CSTD) $(OPT) -static
SRCS    := qreport.c $(shell find src -name '*.c' -o -name '*.h')
TESTS   := $(wildcard tests/*.c tests/*.h fuzz/*.h)
DEPS    := third_party/stamp

.PHONY: all test test-tools asan regen bench bench-llm bench-models clean clang fixtures aarch64 test-aarch64 sizes fuzz fuzz-smoke fuzz-build

all: qreport

third_party/stamp:
	./build.sh --deps-only

qreport: $(SRCS) $(DEPS)
	$(CC) $(CFLAGS_ALL) -DQR_BUILD_FLAGS='"$(BUILD_FLAGS_STR)"' -static -o $@ qreport.c $(LIBS)

build/test_main: $(SRCS) $(TESTS) $(DEPS)
	@mkdir -p build
	$(CC) $(CFLAGS_ALL) -DQR_TESTING -o $@ tests/test_main.c $(LIBS)

# Kernel micro-benchmark (GFLOP/s, GOP/s per kernel level and thread count); not part of test.
build/bench_kern: $(SRCS) bench/kern_bench.c $(DEPS)
	@mkdir -p build
	$(CC) $(CFLAGS_ALL) -o $@ bench/kern_bench.c $(LIBS)

# A command's model executions counted (test-only counters; issue 30); not part of test.
build/run_count: $(SRCS) bench/run_count.c $(DEPS)
	@mkdir -p build
	$(CC) $(CFLAGS_ALL) -o $@ bench/run_count.c $(LIBS)

# The graph view's layout time and HTML bytes per node (bench/README.md); not part of test.
build/graph_bench: $(SRCS) bench/graph_bench.c $(DEPS)
	@mkdir -p build
	$(CC) $(CFLAGS_ALL) -o $@ bench/graph_bench.c $(LIBS)

# qreport vs ONNX Runtime (bench/README.md); not part of test. bench-models generates the
# ResNet-18 / MobileNetV2 float + QAT pairs and the transformer models (ViT-B/16, BERT-base-like,
# GPT-2-small-like with their int8 QDQ twins) into bench/models/ (git-ignored) unless present;
# bench measures side by side and writes bench/RESULTS.md and bench/RESULTS_TRANSFORMERS.md.
# BENCH_ARGS: extra bench/run.py options; TF_BENCH_ARGS: extra bench/transformers.py options;
# WF_BENCH_ARGS: extra bench/workflow.py options (runall vs the Python workflow, bench/WORKFLOW.md).
BENCH_PY   ?= /usr/bin/python3
BENCH_ARGS ?=
TF_BENCH_ARGS ?=
bench-models:
	$(BENCH_PY) bench/make_models.py
	$(BENCH_PY) bench/make_transformers.py

# Issue 26's ~0.5B-parameter decoder (fixtures/make_llm.py --bench, ~2.5 GB in bench/models/llm/,
# git-ignored) and bench/llm.py: runall --generate 16 wall time and peak RSS against its bound
# (bench/RESULTS_LLM.md). Not part of `make bench` (the model alone is 2 GB).
bench-llm: qreport
	[ -f bench/models/llm/int4_sym/model.onnx ] || $(BENCH_PY) fixtures/make_llm.py --bench
	$(BENCH_PY) bench/llm.py

bench: qreport bench-models
	@$(MAKE) --no-print-directory build/bench_kern || echo "bench: build/bench_kern does not build: no per-operator table"
	$(BENCH_PY) bench/run.py $(BENCH_ARGS)
	$(BENCH_PY) bench/transformers.py $(TF_BENCH_ARGS)
	$(BENCH_PY) bench/workflow.py $(WF_BENCH_ARGS)

# Every test: unit tests, conformance over ../shared/conformance (when present),
# golden fixtures and CLI bad-input tests. Last line: "N passed, N failed, N skipped".
# First every fuzz target runs FUZZ_SMOKE_SECONDS (see fuzz-smoke; 0 skips); its outcome
# (build/fuzz_smoke.status) is counted by test_main as the test "fuzz smoke".
test: qreport build/test_main test-tools fuzz-smoke
	QR_BIN=./qreport QT_FUZZ_SMOKE="$$(cat build/fuzz_smoke.status 2>/dev/null)" ./build/test_main

# The tools the tests use beyond the build (python3, unzip, node + ONNX Runtime for node, Chromium,
# Slurm + munge, clang's libFuzzer): installed when missing if root, else listed (those tests
# then say skipped). TEST_TOOLS=0 leaves the machine as it is.
TEST_TOOLS ?= 1
test-tools:
	@if [ "$(TEST_TOOLS)" = 1 ]; then tests/tools.sh; else tests/tools.sh --check || true; fi

# AddressSanitizer + UBSan over the whole suite (dynamic build: ASan cannot be static). GCC's
# -fsanitize=undefined leaves out float-cast-overflow (a NaN or out-of-range float converted to an
# integer), which clang's, the fuzzers', has: named here.
asan: $(DEPS)
	@mkdir -p build
	$(CC) $(CSTD) -O1 -g $(WARN) $(INC) -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all \
	  -fno-omit-frame-pointer -DQR_BUILD_FLAGS='"asan"' -o build/qreport-asan qreport.c $(LIBS)
	$(CC) $(CSTD) -O1 -g $(WARN) $(INC) -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all \
	  -fno-omit-frame-pointer -DQR_TESTING -o build/test_asan tests/test_main.c $(LIBS)
	QR_BIN=./build/qreport-asan ASAN_OPTIONS=detect_leaks=1 ./build/test_asan

# The code must also compile warning-free with clang.
clang: $(DEPS)
	@mkdir -p build
	clang $(CSTD) $(OPT) -Wall -Wextra -Werror $(INC) -o build/qreport-clang qreport.c $(LIBS)
	clang $(CSTD) $(OPT) -Wall -Wextra -Werror $(INC) -DQR_TESTING -o build/test_clang tests/test_main.c $(LIBS)

regen:
	./build.sh --regen

fixtures:
	fixtures/regen.sh

clean:
	rm -rf build qreport qreport-aarch64

# ---- aarch64 cross build (Debian gcc-aarch64-linux-gnu, qemu-user-static) ----------------
# Dependencies: `ARCH=arm64 ./build.sh --deps-only` (pinned arm64 debs -> third_party/arm64/;
# arch-independent headers come from third_party/include).
CROSS      ?= aarch64-linux-gnu-
# -cpu max: every optional feature qemu emulates (dotprod, i8mm), so each kernel level is tested.
QEMU       ?= qemu-aarch64-static -cpu max
A64_INC    := -Ithird_party/arm64/include $(INC)
A64_LIBS   := -Lthird_party/arm64/lib -lminizip -lz -lprotobuf-c -lm -lpthread
A64_DEPS   := third_party/arm64/stamp
# No a*b+c -> fma contraction: GCC contracts by default on aarch64 (not on baseline x86-64),
# which changes float rounding and flips quantized values at rounding boundaries. The scalar
# paths must round like x86-64 and the ref kernels. GCC's vmulq/vaddq are plain vector
# operators, so the NEON kernels rely on it too to stay bit-identical to ref.
A64_FLAGS  := $(CSTD) $(OPT) -ffp-contract=off $(WARN) $(A64_INC) $(CFLAGS)

third_party/arm64/stamp:
	ARCH=arm64 ./build.sh --deps-only

qreport-aarch64: $(SRCS) $(A64_DEPS)
	$(CROSS)gcc $(A64_FLAGS) -DQR_BUILD_FLAGS='"$(CROSS)gcc $(CSTD) $(OPT) -ffp-contract=off -static"' \
	  -static -o $@ qreport.c $(A64_LIBS)

build/test_main-aarch64: $(SRCS) $(TESTS) $(A64_DEPS)
	@mkdir -p build
	$(CROSS)gcc $(A64_FLAGS) -DQR_TESTING -static -o $@ tests/test_main.c $(A64_LIBS)

# Stripped static binary size per architecture (target: <= 3 MB each).
sizes:
	@mkdir -p build
	@for b in qreport:strip qreport-aarch64:$(CROSS)strip; do f=$${b%%:*}; s=$${b#*:}; \
	  [ -f $$f ] || continue; $$s -o build/$$f.stripped $$f && \
	  stat -c%s build/$$f.stripped | awk -v f=$$f '{ printf "stripped static %-16s %8d bytes (%.2f MB)%s\n", \
	    f, $$1, $$1 / 1048576, ($$1 > 3145728 ? "  ** over the 3 MB target **" : "") }'; done

aarch64: qreport-aarch64
	@$(MAKE) --no-print-directory sizes

# The whole suite on the aarch64 binaries under qemu user-mode emulation.
test-aarch64: qreport-aarch64 build/test_main-aarch64
	QR_BIN="$(QEMU) ./qreport-aarch64" $(QEMU) ./build/test_main-aarch64

# ---- fuzzing (libFuzzer: clang + Debian libclang-rt-14-dev) ---------------------------------
# Targets in fuzz/ include qreport.c. Seed corpora are generated into build/fuzz/corpus/ from
# fixtures/ and the conformance data; see fuzz/run.sh for the per-target options, where new
# inputs and crashes go, and how a crash becomes a regression test.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
# `make test` runs every target this long first (0 = skip), with a fixed seed.
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_TARGETS := onnx_load npy pb onnx_run data_dir
# One binary holds every target (fuzz/fuzz_main.c: one sanitizer build of qreport.c, not five);
# build/fuzz/fuzz_<target> are links to it, and the name it runs by picks the target.
FUZZ_BINS    := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
FUZZ_CFLAGS   = $(CSTD) -O1 -g -Wall -Wextra -Werror $(INC) -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -fno-omit-frame-pointer
comma := ,

build/fuzz/fuzz_qreport: fuzz/fuzz_main.c fuzz/fuzz_targets.h fuzz/onnx_mutator.h $(SRCS) $(DEPS)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wl$(comma)--wrap=posix_memalign -o $@ $< $(LIBS)

build/fuzz/fuzz_%: build/fuzz/fuzz_qreport
	ln -sf fuzz_qreport $@

build/fuzz/corpus/stamp: fuzz/make_corpus.sh
	fuzz/make_corpus.sh build/fuzz/corpus
	@touch $@

fuzz-build: $(FUZZ_BINS) build/fuzz/corpus/stamp

# make fuzz FUZZ_SECONDS=N: each target N seconds, one after the other (random seeds).
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do fuzz/run.sh $$t $(FUZZ_SECONDS) || exit 1; done

# Part of `make test`: each target FUZZ_SMOKE_SECONDS with a fixed seed when clang can link
# libFuzzer; otherwise says it is skipped. Writes its outcome to build/fuzz_smoke.status.
fuzz-smoke: test-tools
	@mkdir -p build; rm -f build/fuzz_smoke.status
	@if [ "$(FUZZ_SMOKE_SECONDS)" = 0 ]; then echo "fuzz: skipped (FUZZ_SMOKE_SECONDS=0)"; \
	  echo "skipped: FUZZ_SMOKE_SECONDS=0" > build/fuzz_smoke.status; \
	elif ! fuzz/run.sh --probe $(FUZZ_CC); then \
	  echo "fuzz: skipped ($(FUZZ_CC) with libFuzzer not available: apt-get install clang libclang-rt-14-dev)"; \
	  echo "skipped: $(FUZZ_CC) with libFuzzer not available (apt-get install clang libclang-rt-14-dev)" > build/fuzz_smoke.status; \
	else $(MAKE) --no-print-directory fuzz-build && \
	  for t in $(FUZZ_TARGETS); do fuzz/run.sh --smoke $$t $(FUZZ_SMOKE_SECONDS) || exit 1; done && \
	  echo passed > build/fuzz_smoke.status; fi
