# chime: build, test, demo and benchmark.
#
#   make demo    build chime and show a real notification (starts a private bus and
#                dunst under Xvfb when there is no desktop session)
#   make test    the whole test suite, on a private dbus-daemon with dunst under Xvfb
#   make bench   start-up and round-trip benchmarks against notify-send, gdbus,
#                dbus-send and raw libdbus (see docs/BENCHMARKS.md)
#
# Each target installs the Debian packages it needs when they are missing.

SWIFT ?= swift
# Release builds link the Swift runtime and libstdc++ statically and, unless
# PIE=1, as a position-dependent executable: each cuts start-up time (measured
# in docs/BENCHMARKS.md; PIE=1 keeps address randomisation of the executable).
STATIC_LIBS := .build-static-libs
PIE ?= 0
# toml++ (inside TOMLKit) asserts on some malformed input instead of reporting it, and SwiftPM
# leaves C++ assertions on even in release builds: -DNDEBUG turns them off, so such a file is
# a diagnostic, not a crash (the fuzz test in Tests/ChimeConfigTests checks it).
CXX_FLAGS := -Xcxx -DNDEBUG
RELEASE_FLAGS := -c release --static-swift-stdlib -Xlinker -L$(CURDIR)/$(STATIC_LIBS) $(CXX_FLAGS)
ifeq ($(PIE),0)
RELEASE_FLAGS += -Xswiftc -Xclang-linker -Xswiftc -no-pie
endif
RELEASE_BIN := .build/release/chime

BUILD_PACKAGES := libdbus-1-dev libsqlite3-dev zlib1g-dev pkg-config dbus-daemon g++
RUNTIME_PACKAGES := dbus-daemon dunst xvfb
TEST_PACKAGES := $(BUILD_PACKAGES) dunst xvfb libnotify-bin python3-png
BENCH_PACKAGES := $(BUILD_PACKAGES) dunst xvfb libnotify-bin libglib2.0-bin dbus-bin gcc python3

.PHONY: all build release demo test bench deps-build deps-test deps-bench clean

all: build

build: deps-build
	$(SWIFT) build $(CXX_FLAGS)

release: deps-build $(STATIC_LIBS)/libstdc++.a
	$(SWIFT) build $(RELEASE_FLAGS) --product chime
	@# swift-corelibs Foundation (NSString bridging, CoreFoundation, ICU: 48 MB, 2 MB of RSS and a
	@# slower start for every chime notify) must not be linked in; one String method can pull it.
	@if nm $(RELEASE_BIN) | grep -q __CFInitialize; then \
		echo "error: $(RELEASE_BIN) links swift-corelibs Foundation; relink with -Xlinker -Map=chime.map and look for libFoundation.a(" >&2; exit 1; fi

# A folder holding only libstdc++.a, searched first, so -lstdc++ links statically.
$(STATIC_LIBS)/libstdc++.a:
	@mkdir -p $(STATIC_LIBS)
	@lib=$$(g++ -print-file-name=libstdc++.a); \
	if [ -f "$$lib" ]; then ln -sf "$$lib" $@; else echo "libstdc++.a not found; linking it dynamically"; touch $@; fi

demo: release deps-demo
	@scripts/demo.sh $(RELEASE_BIN)

test: deps-test
	$(SWIFT) build $(CXX_FLAGS)
	$(SWIFT) build --build-tests $(CXX_FLAGS)
	$(SWIFT) test $(CXX_FLAGS)

bench: release deps-bench
	$(SWIFT) build $(RELEASE_FLAGS) --product chime-bench
	$(SWIFT) build $(RELEASE_FLAGS) --product chime-bench-nextfire
	$(SWIFT) build $(RELEASE_FLAGS) --product chime-bench-daemon
	$(SWIFT) build $(RELEASE_FLAGS) --product chime-bench-config
	@scripts/bench.sh

deps-build:
	@scripts/install-packages.sh $(BUILD_PACKAGES)
deps-demo:
	@scripts/install-packages.sh $(RUNTIME_PACKAGES)
deps-test:
	@scripts/install-packages.sh $(TEST_PACKAGES)
deps-bench:
	@scripts/install-packages.sh $(BENCH_PACKAGES)

clean:
	rm -rf .build $(STATIC_LIBS) bench/out
