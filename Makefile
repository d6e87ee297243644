# accy: one-command set-up, build and test on Debian 12 (run as root, or with sudo available).
#   make run    install missing packages, configure, build, run the main job
#   make test   install missing packages, configure, build, run every test through ctest
#   make bench  full accy-bench run
#   make compare  accy vs PyTorch (eager, TorchScript) and NumPy: bench/compare/, bench/README.md
#   make fuzz   libFuzzer targets (fuzz/) for FUZZ_SECONDS each, in build-fuzz/: README "Fuzzing"
#   make fuzz-programs  the differential fuzzer's long run (FUZZ_PROGRAMS=20000, docs/fuzzing.md)
#   make ulp-check  the special functions against MPFR, every f32 input (docs/numerics.md)
# Everything is idempotent: a second call with nothing changed only re-checks.

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

# Debian 12 packages the project needs (named in README.md too).
DEB_PACKAGES := g++ cmake ninja-build pkg-config \
  libabsl-dev libeigen3-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  llvm-19-dev libzstd-dev zlib1g-dev libdnnl-dev ocl-icd-opencl-dev libhwy-dev librandom123-dev libgloo-dev libhiredis-dev \
  liblapack-dev libsleef-dev redis-server qemu-user

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all setup configure build run test test-asan test-tsan test-sanitizers bench compare fuzz fuzz-programs ulp-check clean

all: build

# Installs only the packages that are missing; apt-get update runs only when something is.
setup:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(BUILD_DIR)/build.ninja: CMakeLists.txt | setup
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	./$(BUILD_DIR)/bin/accy demo

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 900

# Sanitizer passes (docs/sanitizers.md), each in its own build folder so `build/` stays a
# release build. A finding fails the test that hit it (UBSan does not recover; ASan and
# LeakSanitizer end the process; TSan halts on its first report).
#   make test-asan   AddressSanitizer + UndefinedBehaviorSanitizer (g++): the ASAN_STAGES tests
#   make test-tsan   ThreadSanitizer (clang-19 and LLVM's OpenMP runtime with its Archer tool, from
#                    libomp-19-dev): the TSAN_STAGES tests, suppressions in tests/tsan.supp
#   make test-sanitizers  both
# A stage is a tests/<stage>/ folder (its binary accy_<stage>_test, its ctest label), or `seed`;
# each build compiles the library and those binaries only (ACCY_TEST_STAGES). The default sets
# are the ones CI runs, chosen by measurement (docs/sanitizers.md).
SANITIZER_CFLAGS := -O1 -g1
ASAN_BUILD_DIR ?= build-asan
ASAN_STAGES ?= ir stablehlo passes transforms schedule analysis fusion reference runtime api tools seed kernels conformance collectives
TSAN_BUILD_DIR ?= build-tsan
TSAN_STAGES ?= api runtime collectives
TSAN_DEB_PACKAGES := clang-19 libclang-rt-19-dev libomp-19-dev
empty :=
space := $(empty) $(empty)
stage_list = $(subst $(space),;,$(strip $(1)))
stage_labels = ^($(subst $(space),|,$(strip $(1))))$$
SANITIZER_CONFIGURE = -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="$(SANITIZER_CFLAGS)" \
  -DCMAKE_C_FLAGS_RELEASE="$(SANITIZER_CFLAGS)" $(CMAKE_FLAGS)
ASAN_ENV = ASAN_OPTIONS="detect_leaks=1 strict_init_order=1" \
  UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
# oneDNN is linked against libgomp.so.1; LLVM's libomp implements libgomp's ABI, so a
# libgomp.so.1 link to it, first on the library path, leaves one OpenMP runtime in the process.
TSAN_ENV = LD_LIBRARY_PATH=$(abspath $(TSAN_BUILD_DIR))/omp-as-gomp \
  OMP_TOOL_LIBRARIES=/usr/lib/llvm-19/lib/libarcher.so ARCHER_OPTIONS=verbose=0 \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1 suppressions=$(abspath tests/tsan.supp)"

test-asan: setup
	cmake -S . -B $(ASAN_BUILD_DIR) $(SANITIZER_CONFIGURE) -DACCY_SANITIZE=address \
	  -DACCY_TEST_STAGES="$(call stage_list,$(ASAN_STAGES))"
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	cd $(ASAN_BUILD_DIR) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 \
	  -L '$(call stage_labels,$(ASAN_STAGES))'

test-tsan: setup
	@$(MAKE) --no-print-directory setup DEB_PACKAGES="$(TSAN_DEB_PACKAGES)"
	CC=clang-19 CXX=clang++-19 cmake -S . -B $(TSAN_BUILD_DIR) $(SANITIZER_CONFIGURE) \
	  -DACCY_SANITIZE=thread -DACCY_TEST_STAGES="$(call stage_list,$(TSAN_STAGES))"
	mkdir -p $(TSAN_BUILD_DIR)/omp-as-gomp
	ln -sf /usr/lib/llvm-19/lib/libomp.so.5 $(TSAN_BUILD_DIR)/omp-as-gomp/libgomp.so.1
	cmake --build $(TSAN_BUILD_DIR) -j $(JOBS)
	cd $(TSAN_BUILD_DIR) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 \
	  -L '$(call stage_labels,$(TSAN_STAGES))'

test-sanitizers: test-asan test-tsan

# The differential fuzzer's long run (docs/fuzzing.md): FUZZ_PROGRAMS generated programs from
# FUZZ_SEED through the JIT at 1 and 2 threads and the reference evaluator; failures (reduced)
# are written to FUZZ_OUT. ctest runs a short fixed-seed batch (accy_testing_test).
FUZZ_PROGRAMS ?= 20000
FUZZ_SEED ?= 1
FUZZ_OUT ?= $(BUILD_DIR)/fuzz
fuzz-programs: build
	./$(BUILD_DIR)/bin/accy fuzz --seed $(FUZZ_SEED) --programs $(FUZZ_PROGRAMS) --out $(FUZZ_OUT)

bench: build
	./$(BUILD_DIR)/bin/accy-bench

# The peers come from Debian, installed only if missing; libopenblas0-pthread replaces the
# reference BLAS (about 6 GFLOP/s) that torch and numpy would otherwise use. Not part of `test`.
COMPARE_DEB_PACKAGES := python3-torch python3-numpy python3-matplotlib libopenblas0-pthread
COMPARE_FLAGS ?=
compare: configure
	@$(MAKE) --no-print-directory setup DEB_PACKAGES="$(COMPARE_DEB_PACKAGES)"
	cmake --build $(BUILD_DIR) -j $(JOBS) --target accy-compare-runner
	/usr/bin/python3 bench/compare/compare.py --runner $(BUILD_DIR)/bin/accy-compare-runner \
	  --out-dir bench/results $(COMPARE_FLAGS)

# The special functions' accuracy (tools/ulp_check/special_functions.cc, docs/numerics.md):
# every f32 input against a double oracle that MPFR checks, f64 samples against MPFR, and the
# throughput against glibc. Installs libmpfr-dev (LGPL-3.0+, linked only into this tool) if
# missing; reconfigures so CMake finds it. Not part of `test`; all 15 functions take about half
# an hour on 2 cores. ULP_FLAGS="--functions erf,lgamma --f32-chunks 16" checks fewer.
ULP_DEB_PACKAGES := libmpfr-dev
ULP_FLAGS ?=
ulp-check: configure
	@$(MAKE) --no-print-directory setup DEB_PACKAGES="$(ULP_DEB_PACKAGES)"
	cmake -S . -B $(BUILD_DIR) > /dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS) --target accy-ulp-check
	./$(BUILD_DIR)/bin/accy-ulp-check $(ULP_FLAGS)

# Coverage-guided fuzzing (fuzz/, README "Fuzzing"): clang-19 + libFuzzer + ASan/UBSan in its own
# build folder; the packages are installed only if missing and are not part of `test`. Each target
# runs FUZZ_SECONDS; new inputs go to build-fuzz/corpus/<target>, crashes to
# build-fuzz/crashes/<target>, the output to build-fuzz/logs/<target>.log. Fails when any target
# reports a crash, leak, timeout or sanitizer error (after running all of them).
FUZZ_DEB_PACKAGES := clang-19 libclang-rt-19-dev libomp-19-dev python3
FUZZ_DIR := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= stablehlo_parse_fuzzer npy_fuzzer compile_run_fuzzer
FUZZ_JOBS ?= $(JOBS)
# -max_len per target (bytes): whole conformance programs for the parser, small ones for the
# engine (whose size limits skip anything bigger anyway), small .npy files.
FUZZ_MAX_LEN_stablehlo_parse_fuzzer := 65536
FUZZ_MAX_LEN_compile_run_fuzzer := 16384
FUZZ_MAX_LEN_npy_fuzzer := 4096
FUZZ_FLAGS ?=
FUZZ_ENV := ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
  UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  LSAN_OPTIONS=$${LSAN_OPTIONS:-suppressions=$(CURDIR)/fuzz/lsan.supp:print_suppressions=0}
fuzz: setup
	@$(MAKE) --no-print-directory setup DEB_PACKAGES="$(FUZZ_DEB_PACKAGES)"
	@[ -f $(FUZZ_DIR)/build.ninja ] || CC=clang-19 CXX=clang++-19 cmake -S . -B $(FUZZ_DIR) -G Ninja \
	  -DCMAKE_BUILD_TYPE=Fuzz -DACCY_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZ_DIR) -j $(FUZZ_JOBS) --target accy_fuzzers
	@[ -d $(FUZZ_DIR)/seeds ] || python3 fuzz/make_seeds.py --conformance ../shared/conformance/stablehlo \
	  --models ../shared/models --out $(FUZZ_DIR)/seeds
	@failed=""; \
	for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/crashes/$$t $(FUZZ_DIR)/logs $(FUZZ_DIR)/seeds/$$t; \
	  max_len=$$(case $$t in stablehlo_parse_fuzzer) echo $(FUZZ_MAX_LEN_stablehlo_parse_fuzzer);; \
	    compile_run_fuzzer) echo $(FUZZ_MAX_LEN_compile_run_fuzzer);; *) echo $(FUZZ_MAX_LEN_npy_fuzzer);; esac); \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s (log $(FUZZ_DIR)/logs/$$t.log)"; \
	  if $(FUZZ_ENV) ./$(FUZZ_DIR)/bin/$$t $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seeds/$$t \
	      -dict=fuzz/stablehlo.dict -max_len=$$max_len -max_total_time=$(FUZZ_SECONDS) \
	      -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
	      -artifact_prefix=$(FUZZ_DIR)/crashes/$$t/ $(FUZZ_FLAGS) > $(FUZZ_DIR)/logs/$$t.log 2>&1; then \
	    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' \
	      $(FUZZ_DIR)/logs/$$t.log | tail -5; \
	  else \
	    echo "fuzz: $$t FAILED:"; grep -E '^(==[0-9]+==ERROR|SUMMARY|FUZZ PROPERTY)|Test unit written' \
	      $(FUZZ_DIR)/logs/$$t.log | head -5; failed="$$failed $$t"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi

clean:
	rm -rf $(BUILD_DIR)
