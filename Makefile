# qreport — build and test. `./build.sh` fetches the pinned dependencies into
# third_party/ and then runs `make qreport`; `make test` does both if needed.

CC      ?= gcc
OPT     ?= -O2
# snprintf truncation into fixed buffers is deliberate (messages, paths are length-checked).
WARN    := -Wall -Wextra -Werror -Wno-format-truncation
CSTD    := -std=gnu11
INC     := -Ithird_party/include -I.
LIBS    := -Lthird_party/lib -lminizip -lz -lprotobuf-c -lm -lpthread
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) $(INC) $(CFLAGS)
BUILD_FLAGS_STR = $(CC) $(CSTD) $(OPT) -static
SRCS    := qreport.c $(shell find src -name '*.c' -o -name '*.h')
TESTS   := $(wildcard tests/*.c tests/*.h)
DEPS    := third_party/stamp

.PHONY: all test asan regen bench clean clang fixtures

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

# Every test: unit tests, conformance over ../shared/conformance (when present),
# golden fixtures and CLI bad-input tests. Last line: "N passed, N failed".
test: qreport build/test_main
	QR_BIN=./qreport ./build/test_main

# AddressSanitizer + UBSan over the whole suite (dynamic build: ASan cannot be static).
asan: $(DEPS)
	@mkdir -p build
	$(CC) $(CSTD) -O1 -g $(WARN) $(INC) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -fno-omit-frame-pointer -DQR_BUILD_FLAGS='"asan"' -o build/qreport-asan qreport.c $(LIBS)
	$(CC) $(CSTD) -O1 -g $(WARN) $(INC) -fsanitize=address,undefined -fno-sanitize-recover=all \
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
	rm -rf build qreport
