# pgiofs -- top-level build.
#
# Variants: `make` (release, -O2), `make asan` / `make tsan` (sanitizer builds
# in build/asan and build/tsan; binaries in bin/asan, bin/tsan), `make check`
# (build then run every test, or those TESTS names; last line "N passed,
# N failed, N skipped"),
# `make check-long` (the long crash and load sets, LONG=1), `make check-asan`,
# `make check-tsan`.  WERROR=1 (set by CI) adds -Werror.

VARIANT ?= release
PKGS    := fuse3 liburing liblz4 libpq inih jansson

CC      ?= cc
CFLAGS_BASE := -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-Wmissing-prototypes -Wstrict-prototypes -D_GNU_SOURCE -g \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm

ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif

ifeq ($(VARIANT),release)
OPT := -O2
BUILD := build/release
BIN := bin
else ifeq ($(VARIANT),asan)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
BUILD := build/asan
BIN := bin/asan
else ifeq ($(VARIANT),tsan)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=thread
BUILD := build/tsan
BIN := bin/tsan
else
$(error VARIANT must be release, asan or tsan)
endif
CFLAGS := $(CFLAGS_BASE) $(OPT) $(EXTRA_CFLAGS)
LDFLAGS := $(OPT) $(EXTRA_LDFLAGS)

# ---- include paths: what each module may see ----------------------------
# A module sees its own directory and the public headers of the modules it
# may call (docs/architecture.md), nothing else: common/ is all public;
# iosched.h is linked alone into $(PUB)/iosched, so that fuse/ can include
# it but not iosched_i.h; pgload/ sees common/ only.  Tests see what their
# module sees.  `make incflags-MODULE` prints a module's flags.
PUB := $(BUILD)/include
PUB_HEADERS := $(PUB)/iosched/iosched.h
INC_common  := -Icommon
INC_iosched := -Iiosched -Icommon
INC_fuse    := -Ifuse -I$(PUB)/iosched -Icommon
INC_pgload  := -Ipgload -Icommon
INC_disk    := -Idisk -I$(PUB)/iosched -Icommon

# ---- modules -------------------------------------------------------------
COMMON_SRC  := $(wildcard common/*.c)
IOSCHED_SRC := $(wildcard iosched/*.c)
FUSE_SRC    := $(wildcard fuse/*.c)
PGLOAD_SRC  := $(wildcard pgload/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

COMMON_OBJ  := $(call obj,$(COMMON_SRC))
IOSCHED_OBJ := $(call obj,$(IOSCHED_SRC))
FUSE_OBJ    := $(call obj,$(FUSE_SRC))
PGLOAD_OBJ  := $(call obj,$(PGLOAD_SRC))

# Libraries of each module (the binaries' main() lives in *_main.c).
LIBCOMMON  := $(BUILD)/libcommon.a
LIBIOSCHED := $(BUILD)/libiosched.a
LIBPGIOFS  := $(BUILD)/libpgiofs.a
LIBPGLOAD  := $(BUILD)/libpgload.a

PROGS := $(BIN)/pgiofs
ifneq ($(wildcard pgload/pgload_main.c),)
PROGS += $(BIN)/pgload
endif

# disk/: pgdisk, the modelled disk, a command on iosched and common
DISK_SRC := $(wildcard disk/*.c)
DISK_OBJ := $(call obj,$(DISK_SRC))
PROGS += $(BIN)/pgdisk

# ---- tests: every tests/<module>/test_*.c is one program -----------------
TEST_SRC  := $(wildcard tests/*/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TEST_HELPER_SRC := $(wildcard tests/*/helper_*.c)
TEST_HELPERS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_HELPER_SRC))
# helper_wcount.c is also an LD_PRELOAD shim (test_load.sh) that carries
# pgiofs's classifier; loaded into PostgreSQL and the daemon, it is built
# without sanitizers, which must come first in a process
WCOUNT_SHIM := $(BUILD)/tests/fuse/helper_wcount.so
TEST_HELPERS += $(WCOUNT_SHIM)

.PHONY: all asan tsan check check-long check-asan check-tsan clean deps demo bench install uninstall fuzz
all: $(PROGS) $(TEST_BINS) $(TEST_HELPERS)

$(PUB)/iosched/%.h: iosched/%.h
	@mkdir -p $(dir $@)
	ln -sf $(abspath $<) $@

$(BUILD)/common/%.o:  INC := $(INC_common)
$(BUILD)/iosched/%.o: INC := $(INC_iosched)
$(BUILD)/fuse/%.o:    INC := $(INC_fuse)
$(BUILD)/pgload/%.o:  INC := $(INC_pgload)
$(BUILD)/disk/%.o:    INC := $(INC_disk)
$(BUILD)/%.o: %.c | $(PUB_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -MMD -MP -c $< -o $@

# The git commit the programs were built from, for pgload compare's
# results.json ("unknown" outside a git checkout; "-dirty" with changes
# not committed).  commit.h is rewritten only when the commit changes, so
# that only what records it is rebuilt.
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
ifneq ($(GIT_COMMIT),)
GIT_COMMIT := $(GIT_COMMIT)$(if $(shell git status --porcelain --untracked-files=no 2>/dev/null),-dirty)
endif
GEN := $(BUILD)/gen
$(GEN)/commit.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define PGL_GIT_COMMIT "$(or $(GIT_COMMIT),unknown)"' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/pgload/compare_report.o: INC := $(INC_pgload) -I$(GEN)
$(BUILD)/pgload/compare_report.o: $(GEN)/commit.h
.PHONY: FORCE
FORCE:

$(LIBCOMMON): $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^
$(LIBIOSCHED): $(IOSCHED_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^
$(LIBPGIOFS): $(filter-out %_main.o,$(FUSE_OBJ))
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^
$(LIBPGLOAD): $(filter-out %_main.o,$(PGLOAD_OBJ))
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/pgiofs: $(BUILD)/fuse/pgiofs_main.o $(LIBPGIOFS) $(LIBIOSCHED) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/pgload: $(BUILD)/pgload/pgload_main.o $(LIBPGLOAD) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/pgdisk: $(DISK_OBJ) $(LIBIOSCHED) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/common/%:  INC := $(INC_common)
$(BUILD)/tests/iosched/%: INC := $(INC_iosched)
$(BUILD)/tests/fuse/%:    INC := $(INC_fuse)
$(BUILD)/tests/pgload/%:  INC := $(INC_pgload)
$(BUILD)/tests/disk/%:    INC := $(INC_disk)
$(BUILD)/tests/%: tests/%.c $(LIBPGIOFS) $(LIBPGLOAD) $(LIBIOSCHED) $(LIBCOMMON) | $(PUB_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -Itests -o $@ $< $(LIBPGIOFS) $(LIBPGLOAD) $(LIBIOSCHED) $(LIBCOMMON) $(LDLIBS)

$(WCOUNT_SHIM): tests/fuse/helper_wcount.c fuse/classify.c fuse/pagetype.c | $(PUB_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(INC_fuse) -O2 -DWCOUNT_SHIM -fPIC -fvisibility=hidden -shared -o $@ $^ -ldl

incflags-%:
	@echo $(INC_$*)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- variants --------------------------------------------------------------
asan:
	$(MAKE) VARIANT=asan all
tsan:
	$(MAKE) VARIANT=tsan all

# TESTS: substrings selecting tests (tests/run.sh), e.g. TESTS="fuse/ iosched/";
# JOBS: how many tests run at once (default 2)
check: deps
	$(MAKE) all
	@BUILD=$(BUILD) BIN=$(BIN) tests/run.sh $(TESTS)

# check-long: the long crash set (LONG=1: 25 postgres kills, 5
# daemon kills, ...), the long load test (4 minutes of load) and the power
# cuts (25 per file system: ext4, ext3, xfs); see docs/reliability.md
check-long: deps
	$(MAKE) all
	@LONG=1 BUILD=$(BUILD) BIN=$(BIN) tests/run.sh test_crash test_load test_powercut

# the fuzz targets are clang's own sanitizer builds whatever the variant:
# the sanitizer runs give them a few seconds each, make check the full 10-20
check-asan:
	$(MAKE) VARIANT=asan FUZZ_SECONDS=3 FUZZ_IOSTAT_SECONDS=2 check
check-tsan:
	$(MAKE) VARIANT=tsan FUZZ_SECONDS=3 FUZZ_IOSTAT_SECONDS=2 check

# fuzz: every libFuzzer target for FUZZ_SECONDS each (default 600); make check
# runs them briefly
FUZZ_SECONDS ?= 600
fuzz: deps
	$(MAKE) all
	@FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD) BIN=$(BIN) tests/run.sh fuzz

deps:
	scripts/install-deps.sh

# demo: the README's main job (scripts/demo.sh): pgload compare on a modelled
# 2004 hdd with ext4, the kernel's mq-deadline and bfq (or kyber) against pgiofs's
# profiles, an import under OLTP clients; prints the table and the report
demo: deps
	$(MAKE) all
	scripts/demo.sh

bench: all
	bench/passthrough.sh

# install: binaries, the default configuration and the profiles, man pages
# and the systemd unit template.  SYSCONFDIR is /etc whatever PREFIX, where
# the documentation, the unit and an administrator look for it.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
install: $(PROGS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/pgiofs/profiles $(DESTDIR)$(SYSCONFDIR)/pgiofs \
		$(DESTDIR)$(UNITDIR)
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 config/profiles/*.conf $(DESTDIR)$(PREFIX)/share/pgiofs/profiles/
	install -m 0644 config/pgiofs.conf $(DESTDIR)$(PREFIX)/share/pgiofs/pgiofs.conf
	@# never overwrite a configuration the administrator may have edited
	[ -e $(DESTDIR)$(SYSCONFDIR)/pgiofs/pgiofs.conf ] || \
		install -m 0644 config/pgiofs.conf $(DESTDIR)$(SYSCONFDIR)/pgiofs/pgiofs.conf
	install -m 0644 man/pgiofs.1 man/pgload.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 man/pgdisk.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		systemd/pgiofs@.service >$(DESTDIR)$(UNITDIR)/pgiofs@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/pgiofs@.service

# uninstall: what install put there, but the configuration in SYSCONFDIR
# (it may have been edited; remove it by hand).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,pgiofs pgload pgdisk) \
		$(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,pgiofs.1 pgload.1 pgdisk.1) \
		$(DESTDIR)$(UNITDIR)/pgiofs@.service
	rm -rf $(DESTDIR)$(PREFIX)/share/pgiofs

clean:
	rm -rf build bin
