# Entry points. Each target installs what it needs first (scripts/setup is idempotent).
#   make run    build, start a server and 4 agents on loopback, run a demo workload with the CLI
#   make sim-demo  build, generate a workload, replay it through `sluice sim`
#   make test   build, run all tests (plus the core's tests under ASan+UBSan, plus fuzz smoke runs)
#   make build  build ./build/sluice and the test binaries
#   make bench  run the Google Benchmark suite
#   make fuzz   longer fuzzing runs (FUZZ_SECONDS per target, default 300)
#   make install  install sluice, sluice-full and the Slurm/LSF command symlinks (PREFIX, DESTDIR)
#   make deb    Debian packages of the built tree into build/deb/ (debian/, docs/install.md)

JOBS ?= 2
FUZZ_SECONDS ?= 300

# ccache hits across clones: paths are hashed relative to the checkout, not the folder name.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: install setup pgo-profile configure build build-sluice build-asan test run sim-demo ha-demo bench fuzz clean deb

setup:
	@scripts/setup

# Profile-guided optimization of base, core and sim (CMakeLists.txt): an instrumented
# sluice-full in build-pgo, trained by scripts/pgo-train; `make ... PGO=0` builds without.
PGO ?= 1
PGO_PROFILES := $(CURDIR)/build/pgo-profile
ifeq ($(PGO),1)
PGO_USE := $(PGO_PROFILES)
configure: pgo-profile
endif

# Trained once per tree (the stamp): on a built tree `make run` rebuilds and retrains nothing
# (issue 47.10). `make clean` or removing build/pgo-profile trains again.
PGO_STAMP := $(PGO_PROFILES)/.trained
pgo-profile: setup
	@if [ ! -f $(PGO_STAMP) ]; then \
	  cmake -S . -B build-pgo -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DSLUICE_PGO_GENERATE=$(CURDIR)/build-pgo/profile -DSLUICE_MIMALLOC=OFF >/dev/null && \
	  cmake --build build-pgo -j $(JOBS) --target sluice-full && \
	  scripts/pgo-train build-pgo/sluice-full build-pgo/profile $(PGO_PROFILES) && \
	  touch $(PGO_STAMP); fi

# CMake runs once; afterwards ninja re-runs it itself when a CMakeLists.txt changes.
configure: setup
	@[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSLUICE_PGO_USE=$(PGO_USE) >/dev/null

build: configure
	@cmake --build build -j $(JOBS)

# Only the binary `make run` and `make sim-demo` use, not the tests.
build-sluice: configure
	@cmake --build build -j $(JOBS) --target sluice

build-asan: setup
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=ON \
	  -DSLUICE_CORE_TESTS_ONLY=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)

test: build build-asan
	@ctest --test-dir build --output-on-failure -j $(JOBS) --timeout 600
	@ctest --test-dir build-asan --output-on-failure -j $(JOBS) --timeout 600
	@scripts/fuzz 10
	@tests/packaging/deb_test.sh

run: build-sluice
	@scripts/demo

ha-demo: build-sluice
	@scripts/ha-demo

sim-demo: build-sluice
	@build/sluice gen --jobs 5000 --procs 128 --load 0.85 --seed 1 -o build/demo.jsonl
	@echo "== fifo =="
	@build/sluice sim --workload build/demo.jsonl --hosts 32 --slots 4 --policy fifo
	@echo "== easy_backfill =="
	@build/sluice sim --workload build/demo.jsonl --hosts 32 --slots 4 --policy easy_backfill \
	  --decisions build/demo.decisions.jsonl
	@echo "decisions: build/demo.decisions.jsonl"

bench: configure
	@cmake --build build -j $(JOBS) --target sluice_bench
	@build/sluice_bench

fuzz: setup
	@scripts/fuzz $(FUZZ_SECONDS)

clean:
	rm -rf build build-pgo build-asan build-fuzz

# The packages come from build/ as it is (debian/rules compiles nothing of its own), so they
# follow PGO=. dpkg-buildpackage would write them next to the checkout; build/deb/ instead.
# Without -dbgsym packages unless asked (`make deb DEB_BUILD_OPTIONS=`): compressing
# sluice-full's ~250 MB of DWARF would take minutes of `make test`.
DEB_DIR := build/deb
deb: export DEB_BUILD_OPTIONS ?= noautodbgsym
deb: build-sluice
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	@SLUICE_DEB_DIR=$(CURDIR)/$(DEB_DIR) dpkg-buildpackage -us -uc -b \
	  --buildinfo-option=-u$(DEB_DIR) --buildinfo-file=$(DEB_DIR)/sluice.buildinfo \
	  --changes-option=-u$(DEB_DIR) --changes-file=$(DEB_DIR)/sluice.changes
	@debian/rules clean
	@ls $(DEB_DIR)

PREFIX ?= /usr/local
install: build
	@cmake --install build --prefix $(PREFIX)
