# accy: one-command set-up, build and test on Debian 12 (run as root, or with sudo available).
#   make run    install missing packages, configure, build, run the main job
#   make test   install missing packages, configure, build, run every test through ctest
#   make bench  full accy-bench run
#   make compare  accy vs PyTorch (eager, TorchScript) and NumPy: bench/compare/, bench/README.md
#   make fuzz-programs  the differential fuzzer's long run (FUZZ_PROGRAMS=20000, docs/fuzzing.md)
# Everything is idempotent: a second call with nothing changed only re-checks.

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

# Debian 12 packages the project needs (named in README.md too).
DEB_PACKAGES := g++ cmake ninja-build pkg-config \
  libabsl-dev libeigen3-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  llvm-19-dev libzstd-dev zlib1g-dev libdnnl-dev ocl-icd-opencl-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all setup configure build run test bench compare clean

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

clean:
	rm -rf $(BUILD_DIR)
