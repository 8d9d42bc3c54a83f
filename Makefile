# chime: build, test, demo and benchmark.
#
#   make demo    build chime and show a real notification (starts a private bus and
#                dunst under Xvfb when there is no desktop session)
#   make test    the whole test suite, on a private dbus-daemon with dunst under Xvfb, then
#                the packaging tests (install, D-Bus activation, the .deb installed and purged)
#   make test-app   the desktop app alone, through its accessibility tree (TESTS=Class.test picks)
#   make check   the quick loop: every test that needs no bus, X display or server (time,
#                validation, request coding, parsing, the store, the loop's parts, the CLI's
#                parsing), in under a minute after a build
#   make check-dates   make check's suites and the simulator on the awkward days (libfaketime)
#   make test-desktops   chime against GNOME Shell, Plasma, xfce4-notifyd, notification-daemon,
#                MATE, LXQt, mako, swaync, dunst and Phosh (docs/SERVERS.md; DOCS=1 updates it)
#   make docs    the UserNotifications documentation (DocC) into .build/docs
#   make bench   start-up and round-trip benchmarks against notify-send, gdbus,
#                dbus-send and raw libdbus (see docs/BENCHMARKS.md)
#   make install PREFIX=/usr/local DESTDIR=   the binary, systemd user unit, D-Bus service,
#                desktop entry, icon, man pages, completions and example alarm files;
#                NOTIFY_SEND_LINK=1 also links notify-send to chime
#   make uninstall                            removes exactly those
#   make deb     a Debian package in .build/ (dpkg-deb); DIST=trixie: built inside a trixie root, in .build-trixie/
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
# (scripts/test-examples.sh builds the Examples package with the same flags, in the tests' folder.)
export CXX_FLAGS
# Where release builds go (make test builds the packages' release build in .build-packaging, beside
# the debug tests in .build: SwiftPM lets one command at a time use a build folder).
RELEASE_SCRATCH ?= .build
export RELEASE_SCRATCH
RELEASE_FLAGS := -c release --static-swift-stdlib -Xlinker -L$(CURDIR)/$(STATIC_LIBS) $(CXX_FLAGS)
# What a start costs beyond the loader's work (docs/BENCHMARKS.md, issue 25): relative relocations
# packed (DT_RELR, which glibc 2.36 reads; GNU ld writes it, gold cannot), no $ORIGIN run path (the
# loader would search the binary's directory and its hwcaps subfolders for libm and libc first),
# libgcc linked in (one shared object fewer to load).
RELEASE_FLAGS += -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=bfd -Xlinker -z -Xlinker pack-relative-relocs \
	--disable-local-rpath -Xswiftc -Xclang-linker -Xswiftc -static-libgcc
# libdbus linked statically (STATIC_DBUS=1, the default): libsystemd and the six libraries it
# loads (libgcrypt, liblz4, libzstd, liblzma, libcap, libgpg-error) are then not loaded by every
# chime notify: 0.75 ms of start-up (docs/BENCHMARKS.md). Release builds read dbus-1.pc from
# $(STATIC_LIBS)/pkgconfig, which points -ldbus-1 at Debian's libdbus-1.a; the .deb
# says Built-Using: dbus. packaging/static/sd-daemon-stubs.c stands in for the two libsystemd
# calls libdbus-1.a makes only as a socket-activated bus server.
STATIC_DBUS ?= 1
ifeq ($(STATIC_DBUS),1)
RELEASE_FLAGS += -Xlinker $(CURDIR)/$(STATIC_LIBS)/sd-daemon-stubs.o
RELEASE_ENV := PKG_CONFIG_PATH=$(CURDIR)/$(STATIC_LIBS)/pkgconfig
STATIC_DBUS_FILES := $(STATIC_LIBS)/sd-daemon-stubs.o $(STATIC_LIBS)/pkgconfig/dbus-1.pc
endif
PIE_FLAGS := $(RELEASE_FLAGS)
# chime alone: linked by lld with the functions a notification runs laid out together, in the
# order they first run (packaging/chime.order, written by scripts/order-file.sh), and no symbols of
# its own exported (the static runtime's link line asks for --export-dynamic: 2,360 symbols in the
# dynamic table the loader searches first for every symbol libc and libm bind; the crash
# backtracer reads .symtab). Fewer pages touched at start: docs/BENCHMARKS.md, issue 25.
# Its link map (.build-static-libs/chime.map) is read by make release's check of what was linked.
FRONT_MAP := $(STATIC_LIBS)/chime.map
# It is built in a build folder of its own (its compiler flags differ: in a shared folder each
# product's build would recompile the modules they share, every time), then put beside
# chime-commands, which it hands its other commands to.
FRONT_FLAGS := --scratch-path $(RELEASE_SCRATCH)/front -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld -Xlinker --no-export-dynamic \
	-Xlinker --symbol-ordering-file=$(CURDIR)/packaging/chime.order -Xlinker --no-warn-symbol-ordering \
	-Xlinker -Map=$(CURDIR)/$(FRONT_MAP)
ifeq ($(PIE),0)
RELEASE_FLAGS += -Xswiftc -Xclang-linker -Xswiftc -no-pie
endif
AT_RELEASE := --scratch-path $(RELEASE_SCRATCH)
RELEASE_BIN := $(RELEASE_SCRATCH)/release/chime
COMMANDS_BIN := $(RELEASE_SCRATCH)/release/chime-commands
APP_BIN := $(RELEASE_SCRATCH)/release/chime-alarms
# chime-eds, the daemon's child that speaks to Evolution Data Server (GNOME's calendars), is built
# and installed where libecal's headers are; EDS=0 leaves it out (it links libecal and GLib, which
# nothing else of chime does, and it ships in a package of its own).
EDS_BIN := $(RELEASE_SCRATCH)/release/chime-eds
EDS ?= $(shell pkg-config --exists libecal-2.0 2>/dev/null && echo 1 || echo 0)
# The desktop app (GTK 4 + libadwaita) is built and installed where libadwaita's headers are
# (the build dependencies bring them); APP=0 leaves it out (a server without a desktop).
APP ?= $(shell pkg-config --exists libadwaita-1 2>/dev/null && echo 1 || echo 0)
# Where the project is published: the app's metainfo links its screenshots from here.
HOMEPAGE ?= https://chime.example.org

# libsndfile's and libpulse's headers: chime opens the libraries with dlopen when it first plays a
# sound (never linked), so only their headers are needed to build.
BUILD_PACKAGES := libdbus-1-dev libsqlite3-dev zlib1g-dev pkg-config dbus-daemon g++ gettext libadwaita-1-dev libsndfile1-dev libpulse-dev \
	libecal2.0-dev
RUNTIME_PACKAGES := dbus-daemon dunst xvfb libsndfile1 libpulse0 sound-theme-freedesktop
# What make check's suites run beside chime: systemd-analyze (calendar expressions), Python's zoneinfo
# (zones) and pypng (image data), the zone database.
CHECK_PACKAGES := $(BUILD_PACKAGES) systemd python3 python3-png tzdata
# The desktop app's tests: its accessibility tree (AT-SPI) read from Python, keys through XTest.
APP_TEST_PACKAGES := xvfb dunst at-spi2-core gir1.2-atspi-2.0 python3-gi python3-xlib gettext adwaita-icon-theme librsvg2-common
TEST_PACKAGES := $(CHECK_PACKAGES) $(APP_TEST_PACKAGES) dunst xvfb libnotify-bin python3-png python3-dbusmock python3-jsonschema dpkg-dev \
	bubblewrap xdg-desktop-portal xdg-desktop-portal-gtk \
	lintian desktop-file-utils appstream bash-completion man-db systemd libglib2.0-bin libcap2-bin util-linux \
	pulseaudio pulseaudio-utils sound-theme-freedesktop sox opus-tools lame python3-dateutil python3-dateparser python3-icalendar radicale vdirsyncer \
	faketime at python3-holidays evolution-data-server gir1.2-ecal-2.0 gir1.2-edataserver-1.2 feedbackd dbus-bin
DEB_PACKAGES := $(BUILD_PACKAGES) dpkg-dev lintian
# The notification servers of the compatibility matrix and what drives them (docs/SERVERS.md).
DESKTOP_PACKAGES := $(BUILD_PACKAGES) xvfb dbus-daemon dbus-bin systemd libglib2.0-bin imagemagick python3-dbusmock \
	gir1.2-atspi-2.0 at-spi2-core dunst notification-daemon xfce4-notifyd mate-notification-daemon lxqt-notificationd \
	mako-notifier sway sway-notification-center grim gnome-shell gjs plasma-workspace plasma-desktop kactivitymanagerd \
	phosh phoc gnome-settings-daemon-common
# The alarm sound's peers: canberra-gtk-play (with libcanberra's PulseAudio backend) and paplay.
BENCH_PACKAGES := $(BUILD_PACKAGES) $(APP_TEST_PACKAGES) dunst xvfb libnotify-bin libglib2.0-bin dbus-bin gcc python3 gnome-clocks \
	pulseaudio pulseaudio-utils gnome-session-canberra libcanberra-pulse sound-theme-freedesktop python3-dateparser radicale vdirsyncer \
	evolution-data-server gir1.2-ecal-2.0 gir1.2-edataserver-1.2 python3-dbus

.PHONY: all build release release-app release-eds demo test test-app check check-dates check-suites simulate fuzz test-desktops docs bench dist install uninstall deb screenshot deps-build deps-check deps-test deps-bench deps-deb clean

# Where `make install` puts things (DESTDIR is prepended, for staging and packaging).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(PREFIX)/bin
# chime-commands, which `chime` hands every command but notify to, is not for running by hand.
LIBEXECDIR := $(PREFIX)/libexec/chime
DATADIR := $(PREFIX)/share
UNITDIR := $(PREFIX)/lib/systemd/user
DOCDIR := $(DATADIR)/doc/chime
# The version is written in one place: Sources/Notifications/Version.swift.
VERSION := $(shell sed -n 's/^public let chimeVersion = "\(.*\)"$$/\1/p' Sources/Notifications/Version.swift)

all: build

build: deps-build
	$(SWIFT) build $(CXX_FLAGS)

release: deps-build $(STATIC_LIBS)/libstdc++.a $(STATIC_DBUS_FILES)
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(RELEASE_FLAGS) --product chime-commands
	$(RELEASE_ENV) $(SWIFT) build $(RELEASE_FLAGS) $(FRONT_FLAGS) --product chime
	@scripts/put-binary.sh $(RELEASE_SCRATCH)/front/release/chime $(RELEASE_BIN)
	@# swift-corelibs Foundation (NSString bridging, CoreFoundation, ICU: 48 MB, 2 MB of RSS and a
	@# slower start) must not be linked in; one String method can pull it.
	@if nm $(COMMANDS_BIN) | grep -q __CFInitialize; then \
		echo "error: $(COMMANDS_BIN) links swift-corelibs Foundation; relink with -Xlinker -Map=chime.map and look for libFoundation.a(" >&2; exit 1; fi
	@# chime holds notify and notify-send only: every start of it counts (no argument parser, no
	@# Foundation, no concurrency runtime and its libdispatch, no string-processing library, no zlib
	@# loaded at start: docs/BENCHMARKS.md, issue 25).
	@if nm $(RELEASE_BIN) | grep -q -e ArgumentParser -e FoundationEssentials -e libdispatch_init -e _swift_string_processing \
		|| readelf -d $(RELEASE_BIN) | grep -q 'libz\.so'; then \
		echo "error: $(RELEASE_BIN) links more than a notification needs (ArgumentParser, Foundation, libdispatch, _StringProcessing or libz)" >&2; exit 1; fi
	@scripts/check-argv-link.sh $(FRONT_MAP)

# libdbus-1.a where dbus-1.pc below sends the linker.
$(STATIC_LIBS)/pkgconfig/dbus-1.pc:
	@mkdir -p $(STATIC_LIBS)/pkgconfig $(STATIC_LIBS)/dbus
	@lib=$$(pkg-config --variable=libdir dbus-1)/libdbus-1.a; \
	[ -f "$$lib" ] || { echo "error: $$lib not found (libdbus-1-dev); build with STATIC_DBUS=0" >&2; exit 1; }; \
	ln -sf "$$lib" $(STATIC_LIBS)/dbus/libdbus-1.a
	@printf 'Name: dbus-1\nDescription: libdbus, linked statically\nVersion: %s\nLibs: -L%s -ldbus-1\nCflags: %s\n' \
		"$$(pkg-config --modversion dbus-1)" "$(CURDIR)/$(STATIC_LIBS)/dbus" "$$(pkg-config --cflags dbus-1)" >$@

$(STATIC_LIBS)/sd-daemon-stubs.o: packaging/static/sd-daemon-stubs.c
	@mkdir -p $(STATIC_LIBS)
	gcc -O2 -fPIC -c $< -o $@

# A folder holding only libstdc++.a, searched first, so -lstdc++ links statically.
$(STATIC_LIBS)/libstdc++.a:
	@mkdir -p $(STATIC_LIBS)
	@lib=$$(g++ -print-file-name=libstdc++.a); \
	if [ -f "$$lib" ]; then ln -sf "$$lib" $@; else echo "libstdc++.a not found; linking it dynamically"; touch $@; fi

# The app, position-independent (address randomisation; its start-up is GTK's, not ours).
release-app: deps-build $(STATIC_LIBS)/libstdc++.a $(STATIC_DBUS_FILES)
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(PIE_FLAGS) --product chime-alarms

# chime-eds, position-independent (as Debian builds binaries).
release-eds: deps-build $(STATIC_LIBS)/libstdc++.a $(STATIC_DBUS_FILES)
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(PIE_FLAGS) --product chime-eds

# chime built as it is packaged (position-independent, as Debian builds binaries) in the packages'
# build folder, where make test's packaging stage then finds it built.
demo: deps-build deps-demo
	$(MAKE) --no-print-directory release PIE=1 RELEASE_SCRATCH=$(PACKAGING_SCRATCH)
	@scripts/demo.sh $(PACKAGING_SCRATCH)/release/chime

# The sound tests measure real-time audio to the millisecond (a real PulseAudio, its monitor
# recorded): they run after the others, alone, not beside dozens of daemons and buses.
SOUND_SUITES := AlarmSoundTests PlaybackTests
# The calendar suites start Python, a CalDAV server, vdirsyncer, EDS and daemons of their own, and
# mostly wait on them: they run in processes of their own beside the main stage and the app's tests.
CALENDAR_SUITES := CalendarSyncTests CalendarAlarmTests RecurrenceAgainstDateutilTests HolidaysFromOthersTests OneAlarmEveryMachineTests \
	EDSMirrorTests EDSCalendarTests
# The corpus of UserNotifications programs runs once the Examples package is built (scripts/test-examples.sh).
EXAMPLE_SUITES := CorpusTests

# The packages' release build (what test-packaging installs and packs) goes in a build folder of its
# own: make demo builds chime there the same way, so that make test after it has little left to build.
PACKAGING_SCRATCH := .build-packaging

# The one build of the tests, beside the packages the tests need and the build does not (apt-get is
# mostly waiting on the disk: 34 s on a fresh machine, hidden behind the build) and, at the lowest
# CPU weight, the release build (scripts/test-background.sh); then every stage (scripts/test.sh
# says in what order and why, and what runs beside what).
# The tests run the release build, what the packages hold (CHIME_BINARY: make demo has built chime
# there already, the background adds the app and chime-eds), and a debug daemon only where a test
# needs one of its CHIME_TEST_ switches (TestSupport's DaemonProcess chooses): so the build of the
# tests is TEST_PRODUCTS, not every product (the app, chime-eds and the benchmarks are built by
# the release build or by make check, which reads its log for warnings as make test reads both).
TEST_PRODUCTS := chimePackageTests chime-commands chime chime-simulate
test: deps-check
	@# Resolved once, before any build starts: each would otherwise write Package.resolved.
	$(SWIFT) package resolve
	@mkdir -p .build && rm -f .build/test-packages.rc .build/test-build.rc
	@(scripts/install-packages.sh $(TEST_PACKAGES) >.build/test-packages.log 2>&1; echo $$? >.build/test-packages.rc) &
	@/usr/bin/python3 scripts/check-imports.py
	@/usr/bin/python3 scripts/check-test-dates.py
	@scripts/check-translations.sh
	@# The release build and the Examples package's, on the CPU time the build of the tests leaves.
	@PACKAGING_SCRATCH=$(PACKAGING_SCRATCH) scripts/test-background.sh start
	@# The build's log is kept and read for warnings in chime's code (none are allowed).
	@echo "$(SWIFT) build $(CXX_FLAGS) --product ... ($(TEST_PRODUCTS))"
	@{ for product in $(TEST_PRODUCTS); do $(SWIFT) build $(CXX_FLAGS) --product $$product || exit 1; done; echo 0 >.build/test-build.rc; } 2>&1 \
		| tee .build/test-build.log; [ -s .build/test-build.rc ] || echo 1 >.build/test-build.rc
	@[ "$$(cat .build/test-build.rc)" = 0 ] && scripts/check-warnings.sh .build/test-build.log || { scripts/test-background.sh stop; exit 1; }
	@while [ ! -s .build/test-packages.rc ]; do sleep 1; done; cat .build/test-packages.log; \
		[ "$$(cat .build/test-packages.rc)" = 0 ] || { scripts/test-background.sh stop; echo "make test: the tests' packages could not be installed"; exit 1; }
	@SOUND_SUITES='$(SOUND_SUITES)' CALENDAR_SUITES='$(CALENDAR_SUITES)' EXAMPLE_SUITES='$(EXAMPLE_SUITES)' TEST_BACKGROUND=started \
		CHECK_SUITES='$(CHECK_SUITES)' \
		CHECK_SEEDS=$(CHECK_SEEDS) PACKAGING_SCRATCH=$(PACKAGING_SCRATCH) scripts/test.sh $(CXX_FLAGS)

# The desktop app alone, driven through its accessibility tree under Xvfb (Tests/app).
test-app:
	@scripts/install-packages.sh $(BUILD_PACKAGES) $(APP_TEST_PACKAGES)
	$(SWIFT) build $(CXX_FLAGS) --product chime && $(SWIFT) build $(CXX_FLAGS) --product chime-commands
	$(SWIFT) build $(CXX_FLAGS) --product chime-alarms
	/usr/bin/python3 Tests/app/test_app.py .build/debug/chime .build/debug/chime-alarms $(TESTS)

# The fuzz targets (Sources/FuzzTargets) under libFuzzer and AddressSanitizer, FUZZ_SECONDS each
# (default 60), from their corpus in Fuzz/corpus; what they find goes to Fuzz/crashes (fix it, then
# keep the input in the corpus: the tests run every corpus input through the same targets). One
# -sanitize= flag: SwiftPM passes two in no fixed order, and the driver keeps the last. Leaks are not
# looked for (the Swift runtime's caches of type metadata read as leaks to LeakSanitizer).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := rule icalendar alarm-file request hint png tz-string tzif sound phrase holidays
fuzz: deps-build
	$(SWIFT) build -c release --package-path Fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
	@mkdir -p Fuzz/crashes
	@for t in $(FUZZ_TARGETS); do \
		scratch=$$(mktemp -d); \
		echo "== $$t ($(FUZZ_SECONDS) s)"; \
		SWIFT_BACKTRACE=enable=no CHIME_FUZZ_TARGET=$$t .build-fuzz/release/chime-fuzz $$scratch Fuzz/corpus/$$t -max_total_time=$(FUZZ_SECONDS) \
			-timeout=5 -rss_limit_mb=2048 -max_len=65536 -detect_leaks=0 -print_final_stats=1 -artifact_prefix=Fuzz/crashes/$$t- 2>&1 \
			| grep -E '^(#[0-9]+ *DONE|Done|==[0-9]+==ERROR|SUMMARY|stat::number_of_executed_units|stat::new_units_added|    #[0-9]+ )|fuzz property broken|Fatal error|runtime failure' | head -40; \
		rm -rf $$scratch; \
	done
	@ls Fuzz/crashes | grep . && echo "make fuzz: findings in Fuzz/crashes" || echo "make fuzz: nothing found"

# The suites that need no bus, X display or notification server: `make check` runs these alone.
# A suite that starts a bus (PrivateBus, DaemonProcess, dunst) does not belong here.
CHECK_SUITES := TimekeepingTests\.(CalendarExpression|ContentLine|HostileRule|Recurrence(Expansion|Next|Reading)|RuleFuzz|Rule|ShortRuleText|ZoneCache|Zone)Tests ValidationTests ContentTests CalendarFileTests HostileCalendarTests RenderingTests ExampleConfigTests DiagnosticTests \
	ConfigPropertyTests NamesTests ValueTests ImageDataTests NotifySendSyntaxTests StoreTests OccurrenceQueueTests \
	EventSourceTests PollSetTests ChildProcessesTests ParserEquivalenceTests WordSplittingTests ReportTests PosixTests AlarmsModelTests \
	SandboxTests SchedulerCallTests PartsTests PendingRowsTests FuzzCorpusTests DaysOffTests HolidayCalendarTests CalendarAnswersTests \
	AppleDeclarationsTests AppleInheritanceTests ArchivingTests EDSCalendarConfigTests SchedulerErrorTests
empty :=
space := $(empty) $(empty)

# The suites make check runs, one a line (the packaging test checks each is a suite of the tests).
check-suites:
	@printf '%s\n' $(foreach suite,$(CHECK_SUITES),'$(suite)')

check: deps-check
	@# Each target imports only what Package.swift says it depends on.
	@/usr/bin/python3 scripts/check-imports.py
	@# No test of the real daemon holds a literal date (each is made from now).
	@/usr/bin/python3 scripts/check-test-dates.py
	@# Every string is translated (beside the build).
	@rm -f .build/check-translations.rc; mkdir -p .build; (scripts/check-translations.sh >.build/check-translations.log 2>&1; \
		echo $$? >.build/check-translations.rc) &
	@# Every target (make test builds only what its tests run), its log read for warnings.
	@{ $(SWIFT) build --build-tests $(CXX_FLAGS); echo $$? >.build/check-build.rc; } 2>&1 | tee .build/check-build.log
	@[ "$$(cat .build/check-build.rc)" = 0 ] && scripts/check-warnings.sh .build/check-build.log
	@# The daemon under the simulator, beside the tests (they mostly wait on children and clocks): the
	@# histories kept (Tests/simulation), then a few hundred seeds of a simulated week.
	@rm -f .build/check-simulate.rc; (.build/debug/chime-simulate --replay Tests/simulation/*.steps >.build/check-simulate.log 2>&1 \
		&& .build/debug/chime-simulate --seeds $(CHECK_SEEDS) --days 7 >>.build/check-simulate.log 2>&1; echo $$? >.build/check-simulate.rc) &
	@# (One test process: these tests are CPU-bound, and three processes beside the simulator took
	@# 32-39 s instead of 30.)
	$(SWIFT) test --skip-build --filter '$(subst $(space),|,$(strip $(CHECK_SUITES)))'
	@while [ ! -s .build/check-simulate.rc ]; do sleep 0.2; done; grep -v ': passed (' .build/check-simulate.log; \
		[ "$$(cat .build/check-simulate.rc)" = 0 ] || { echo "the simulator found a failure"; exit 1; }
	@while [ ! -s .build/check-translations.rc ]; do sleep 0.2; done; cat .build/check-translations.log; \
		[ "$$(cat .build/check-translations.rc)" = 0 ]

# make check's suites with the clock moved to the awkward days by libfaketime (a leap day, a southern
# change of summer time, the last day before 2038 and one past 2038-01-19), and the simulator's
# histories around the same days (scripts/check-dates.sh; make test runs it too).
check-dates: deps-check
	@scripts/install-packages.sh faketime
	$(SWIFT) build --build-tests $(CXX_FLAGS)
	@CHECK_SUITES='$(CHECK_SUITES)' scripts/check-dates.sh .build/debug

# The daemon under a deterministic simulator, checked against a model (docs/testing.md): SEEDS
# simulated months from seed FIRST on every core; a failing seed is shrunk to a short history,
# printed and kept in .build/simulate. SEED=N plays one seed and prints its steps; REPLAY=FILE plays
# a kept history. Built optimised, in a folder of its own (the release build's flags differ).
SEEDS ?= 10000
FIRST ?= 1
DAYS ?= 30
CHECK_SEEDS ?= 200
SIMULATE := .build/simulate-build/release/chime-simulate
simulate: deps-build
	$(SWIFT) build -c release $(CXX_FLAGS) --scratch-path .build/simulate-build --product chime-simulate
	@if [ -n "$(REPLAY)" ]; then $(SIMULATE) --replay $(REPLAY); \
	elif [ -n "$(SEED)" ]; then $(SIMULATE) --seed $(SEED) --days $(DAYS); \
	else $(SIMULATE) --replay Tests/simulation/*.steps | tail -1 && $(SIMULATE) --seeds $(SEEDS) --first $(FIRST) --days $(DAYS); fi

# The UserNotifications documentation (DocC, with the porting guide) into .build/docs, as a static
# site; a broken link or symbol reference is an error.
docs:
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target UserNotifications \
		--output-path .build/docs --disable-indexing --transform-for-static-hosting --warnings-as-errors

# chime on every notification server Debian packages (GNOME Shell, Plasma, xfce4-notifyd, ...), each
# on a private bus: the table and screenshots land in .build/desktops; DOCS=1 also updates
# docs/SERVERS.md and docs/servers/. Separate from `make test`: its packages are large.
test-desktops:
	@scripts/install-packages.sh $(DESKTOP_PACKAGES)
	$(SWIFT) build $(CXX_FLAGS) --product chime && $(SWIFT) build $(CXX_FLAGS) --product chime-commands
	@scripts/test-desktops.sh .build/debug/chime .build/desktops $(SERVERS)

bench: deps-bench deps-build $(STATIC_LIBS)/libstdc++.a $(STATIC_DBUS_FILES)
	@# The binary make install and make deb ship (position-independent), kept aside, then the
	@# one make release builds (PIE=0) for everything else.
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(PIE_FLAGS) --product chime-commands
	$(RELEASE_ENV) $(SWIFT) build $(PIE_FLAGS) $(FRONT_FLAGS) --product chime
	@scripts/put-binary.sh $(RELEASE_SCRATCH)/front/release/chime $(RELEASE_BIN)
	@mkdir -p .build/shipped && cp $(RELEASE_BIN) $(COMMANDS_BIN) .build/shipped/
	$(MAKE) --no-print-directory release PIE=0
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(RELEASE_FLAGS) --product chime-bench
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(RELEASE_FLAGS) --product chime-bench-nextfire
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(RELEASE_FLAGS) --product chime-bench-daemon
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(RELEASE_FLAGS) --product chime-bench-config
	$(RELEASE_ENV) $(SWIFT) build $(AT_RELEASE) $(RELEASE_FLAGS) --product chime-eds
	$(MAKE) --no-print-directory release-app
	@scripts/bench.sh

# The translation template, from every tr("...") in the sources and the app's desktop entry and
# metainfo (maintainers run it after changing a string; msgmerge then updates each po/LANG.po).
APP_IN := packaging/app/org.chime.Alarms.desktop.in packaging/app/org.chime.Alarms.metainfo.xml.in
po/chime.pot: $(wildcard Sources/*/*.swift) $(APP_IN)
	scripts/make-pot.sh $@ $(VERSION)

# Man pages and completions, generated from the release binary; the app's translated desktop entry
# and metainfo.
DIST_PARTS := release
ifeq ($(APP),1)
DIST_PARTS += release-app
endif
ifeq ($(EDS),1)
DIST_PARTS += release-eds
endif
dist: $(DIST_PARTS)
	@APP=$(APP) HOMEPAGE=$(HOMEPAGE) VERSION=$(VERSION) scripts/dist.sh $(RELEASE_BIN)

INSTALLED := $(BINDIR)/chime $(LIBEXECDIR)/chime-commands $(UNITDIR)/chime.service $(DATADIR)/dbus-1/services/org.chime.Scheduler.service \
	$(DATADIR)/dbus-1/interfaces/org.chime.Scheduler1.xml \
	$(DATADIR)/applications/chime.desktop $(DATADIR)/icons/hicolor/scalable/apps/chime.svg \
	$(DATADIR)/bash-completion/completions/chime $(DATADIR)/zsh/site-functions/_chime \
	$(DATADIR)/fish/vendor_completions.d/chime.fish \
	$(foreach lang,$(basename $(notdir $(wildcard po/*.po))),$(DATADIR)/locale/$(lang)/LC_MESSAGES/chime.mo)

EDS_INSTALLED := $(LIBEXECDIR)/chime-eds

APP_INSTALLED := $(BINDIR)/chime-alarms $(DATADIR)/applications/org.chime.Alarms.desktop $(DATADIR)/man/man1/chime-alarms.1 \
	$(DATADIR)/metainfo/org.chime.Alarms.metainfo.xml $(DATADIR)/icons/hicolor/scalable/apps/org.chime.Alarms.svg \
	$(DATADIR)/icons/hicolor/symbolic/apps/org.chime.Alarms-symbolic.svg \
	$(DATADIR)/icons/hicolor/symbolic/apps/org.chime.Alarms-timer-symbolic.svg

install: dist
	install -Dm755 $(RELEASE_BIN) $(DESTDIR)$(BINDIR)/chime
	install -Dm755 $(COMMANDS_BIN) $(DESTDIR)$(LIBEXECDIR)/chime-commands
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)/dbus-1/services
	sed 's|@BINDIR@|$(BINDIR)|g' packaging/chime.service.in >$(DESTDIR)$(UNITDIR)/chime.service
	sed 's|@BINDIR@|$(BINDIR)|g' packaging/org.chime.Scheduler.service.in >$(DESTDIR)$(DATADIR)/dbus-1/services/org.chime.Scheduler.service
	chmod 644 $(DESTDIR)$(UNITDIR)/chime.service $(DESTDIR)$(DATADIR)/dbus-1/services/org.chime.Scheduler.service
	install -Dm644 packaging/org.chime.Scheduler1.xml $(DESTDIR)$(DATADIR)/dbus-1/interfaces/org.chime.Scheduler1.xml
	install -Dm644 packaging/chime.desktop $(DESTDIR)$(DATADIR)/applications/chime.desktop
	install -Dm644 packaging/chime.svg $(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/chime.svg
	install -d $(DESTDIR)$(DATADIR)/man/man1
	install -m644 .build/dist/man/*.1 $(DESTDIR)$(DATADIR)/man/man1/
	install -Dm644 .build/dist/completions/chime.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/chime
	install -Dm644 .build/dist/completions/_chime $(DESTDIR)$(DATADIR)/zsh/site-functions/_chime
	install -Dm644 .build/dist/completions/chime.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/chime.fish
	@# The popups' translations (po/), as gettext catalogues.
	for mo in .build/dist/locale/*/LC_MESSAGES/chime.mo; do \
		install -Dm644 $$mo $(DESTDIR)$(DATADIR)/locale/$${mo#.build/dist/locale/}; done
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m644 docs/dbus-interface.md $(DESTDIR)$(DOCDIR)/dbus-interface.md
	@# The reference pages the README links to, where its links find them.
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m644 docs/install.md docs/notify.md docs/alarms.md docs/app.md docs/libraries.md docs/dbus-interface.md \
		$(DESTDIR)$(DOCDIR)/docs/
	install -m644 config/*.toml $(DESTDIR)$(DOCDIR)/examples/
	@# The desktop app, where it was built (APP=1).
	@if [ "$(APP)" = 1 ]; then \
		install -Dm755 $(APP_BIN) $(DESTDIR)$(BINDIR)/chime-alarms && \
		install -Dm644 .build/dist/app/org.chime.Alarms.desktop $(DESTDIR)$(DATADIR)/applications/org.chime.Alarms.desktop && \
		install -Dm644 .build/dist/app/org.chime.Alarms.metainfo.xml $(DESTDIR)$(DATADIR)/metainfo/org.chime.Alarms.metainfo.xml && \
		install -Dm644 packaging/app/chime-alarms.1 $(DESTDIR)$(DATADIR)/man/man1/chime-alarms.1 && \
		for icon in $$(cd packaging/app/icons && find hicolor -name '*.svg'); do \
			install -Dm644 packaging/app/icons/$$icon $(DESTDIR)$(DATADIR)/icons/$$icon || exit 1; done; \
		echo "installed the app: $(BINDIR)/chime-alarms"; \
	else echo "the app is left out (APP=0, or no libadwaita-1-dev)"; fi
	@# GNOME's calendars' child, where it was built (EDS=1).
	@if [ "$(EDS)" = 1 ]; then install -Dm755 $(EDS_BIN) $(DESTDIR)$(LIBEXECDIR)/chime-eds && echo "installed $(LIBEXECDIR)/chime-eds"; \
	else echo "chime-eds is left out (EDS=0, or no libecal2.0-dev): GNOME's calendars cannot be followed"; fi
	@# Opt-in: chime started as notify-send is notify-send (README, "chime as notify-send").
	@if [ "$(NOTIFY_SEND_LINK)" = 1 ]; then \
		if [ -e $(DESTDIR)$(BINDIR)/notify-send ] && [ "$$(readlink $(DESTDIR)$(BINDIR)/notify-send)" != chime ]; then \
			echo "error: $(DESTDIR)$(BINDIR)/notify-send exists and is not chime's link; not replacing it" >&2; exit 1; fi; \
		ln -sfn chime $(DESTDIR)$(BINDIR)/notify-send; fi

# Removes what install put there (man pages by the names dist generates), and nothing else.
uninstall:
	@# The notify-send link, only where it is chime's.
	@if [ "$$(readlink $(DESTDIR)$(BINDIR)/notify-send 2>/dev/null)" = chime ]; then rm -f $(DESTDIR)$(BINDIR)/notify-send; fi
	rm -f $(addprefix $(DESTDIR),$(INSTALLED) $(APP_INSTALLED) $(EDS_INSTALLED))
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null
	rm -f $(DESTDIR)$(DATADIR)/man/man1/chime.1 $(DESTDIR)$(DATADIR)/man/man1/chime-*.1
	rm -rf $(DESTDIR)$(DOCDIR)

# make deb DIST=trixie (or bookworm): built inside a root of that release, made once with debootstrap
# from Debian's archive under .build-DIST and reused (scripts/dist-deb.sh); the packages land there.
# (Only DIST given on the command line: a DIST in the environment is not taken for it.)
ifneq ($(origin DIST),command line)
deb: deps-deb
	@scripts/make-deb.sh $(VERSION)
else
deb:
	@scripts/dist-deb.sh $(DIST) $(DEB_PACKAGES)
endif

deps-deb:
	@scripts/install-packages.sh $(DEB_PACKAGES)

deps-build:
	@scripts/install-packages.sh $(BUILD_PACKAGES)
deps-demo:
	@scripts/install-packages.sh $(RUNTIME_PACKAGES)
deps-check:
	@scripts/install-packages.sh $(CHECK_PACKAGES)
deps-test:
	@scripts/install-packages.sh $(TEST_PACKAGES)
deps-bench:
	@scripts/install-packages.sh $(BENCH_PACKAGES)

# A picture of a real chime alarm popup (dunst under Xvfb), for the README.
screenshot: release
	@scripts/install-packages.sh $(RUNTIME_PACKAGES) imagemagick
	@scripts/screenshot.sh $(RELEASE_BIN) docs/chime-alarm.png

clean:
	rm -rf .build .build-packaging $(STATIC_LIBS) bench/out
