# SPDX-License-Identifier: GPL-2.0-or-later
# dmcrypt — userspace dm-crypt as an nbdkit plugin.
#
#   make            plugin/nbdkit-dmcrypt-plugin.so and tools/
#   make check      install missing Debian packages (as root), build, test
#   make check-full    the same suite with every long test run whole
#   make check-filter  the same suite through the filter (filter/)
#   make check-kernel  the real-kernel tests only (docs/kernel-tests.md)
#   make demo       make a LUKS2 demo image, serve it, write and read it
#   make install    put the plugin in nbdkit's plugin directory
#   make bench      benchmarks against the unencrypted export and peers
#   make bench-cpu  the server's CPU per GiB against openssl's, quickly
#   make lab        the scheduling lab's experiments (docs/scheduling.md):
#                   QUICK=1 for a few minutes, LAB_OUT=DIR (lab-results)
#   make fuzz       libFuzzer fuzzers, FUZZ_SECONDS (60) each; fuzz-smoke:
#                   FUZZ_SMOKE_SECONDS (10)

CC       ?= gcc
CFLAGS   ?= -O2 -g
SANFLAGS ?=
PKGS      = nbdkit libcryptsetup libcrypto libgcrypt libargon2 json-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs libcryptsetup libcrypto libgcrypt \
                libargon2 json-c 2>/dev/null)
NBD_CFLAGS := $(shell pkg-config --cflags libnbd 2>/dev/null)
NBD_LIBS   := $(shell pkg-config --libs libnbd 2>/dev/null)
ALL_CFLAGS = -std=gnu11 -Wall -Wextra -fPIC -fvisibility=hidden -pthread \
             -D_GNU_SOURCE $(PKG_CFLAGS) $(CFLAGS) $(SANFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -pthread -lm

CORE_SRCS  = $(sort $(wildcard crypto/*.c table/*.c backend/*.c backend/sim/*.c dm/*.c \
                               scheduler/*.c luks/*.c control/*.c integrity/*.c))
CORE_OBJS  = $(CORE_SRCS:.c=.o)
CORE_LIB   = common/libdmcore.a
# What both front ends share: the parameters, the volume, the request
# path, the image lock and the control socket's server (volume/), built
# once and linked by both .so files.
VOLUME_SRCS = $(sort $(wildcard volume/*.c volume/*/*.c))
VOLUME_OBJS = $(VOLUME_SRCS:.c=.o)
VOLUME_LIB = volume/libdmvolume.a
PLUGIN_SRCS = $(sort $(wildcard plugin/*.c))
PLUGIN     = plugin/nbdkit-dmcrypt-plugin.so
FILTER_SRCS = $(sort $(wildcard filter/*.c))
FILTER     = filter/nbdkit-dmcrypt-filter.so
STUBS      = tests/nbdkit-stubs.o

UNIT_SRCS  = $(sort $(wildcard tests/unit/test-*.c))
UNIT_BINS  = $(UNIT_SRCS:.c=)
TOOL_SRCS  = $(sort $(wildcard tools/*.c))
TOOL_BINS  = $(TOOL_SRCS:.c=)
# What make install puts on the user's PATH: not the benchmarks' helpers
# (tools/seeker).
USER_TOOLS = tools/dmcryptctl tools/dmcrypt-trace
# dmcryptctl and dmcrypt-trace have more files than one: tools/ctl/*.c,
# tools/trace/*.c.
CTL_OBJS   = $(patsubst %.c,%.o,$(sort $(wildcard tools/ctl/*.c)))
TRACE_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard tools/trace/*.c)))
# tools/writeback's model (tools/pagecache/), unit-tested without libnbd.
WB_OBJS    = $(patsubst %.c,%.o,$(sort $(wildcard tools/pagecache/*.c)))

PLUGINDIR := $(shell pkg-config --variable=plugindir nbdkit 2>/dev/null)
FILTERDIR := $(shell pkg-config --variable=filterdir nbdkit 2>/dev/null)
MANDIR    ?= /usr/share/man
BINDIR    ?= /usr/local/bin

.SECONDARY: $(STUBS)

.PHONY: all check check-user check-filter check-full check-unit check-kernel demo install \
        bench bench-cpu lab deps clean \
        check-asan \
        check-tsan man fuzz fuzz-smoke fuzz-build

all: $(PLUGIN) $(FILTER) $(TOOL_BINS) $(UNIT_BINS) man

# The compiler and flags the tree was last built with: whatever is
# compiled depends on this file, rewritten only when they change, so that
# make check after make check-asan (other CFLAGS, SANFLAGS) builds again
# instead of testing the sanitized objects without their runtime.
# TREE_AS_BUILT=1 keeps the tree as it was built, whatever the flags of
# this make: the tests that run make (install, listing variables) run
# beside servers loading the build they test and must never rebuild it.
BUILD_FLAGS = .build-flags
BUILD_FLAGS_NOW = $(CC) $(ALL_CFLAGS) $(NBD_CFLAGS)
ifneq ($(TREE_AS_BUILT)$(wildcard $(BUILD_FLAGS)),1$(BUILD_FLAGS))
$(shell printf '%s\n' '$(BUILD_FLAGS_NOW)' | cmp -s - $(BUILD_FLAGS) \
          || printf '%s\n' '$(BUILD_FLAGS_NOW)' > $(BUILD_FLAGS))
endif

# Each object's headers, as the compiler found them (-MMD -MP); an
# object without its .d yet is rebuilt once to make it.
%.o: %.c %.d $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<
DEPS = $(sort $(patsubst %.o,%.d,$(CORE_OBJS) $(VOLUME_OBJS) \
         $(PLUGIN_SRCS:.c=.o) $(FILTER_SRCS:.c=.o) $(CTL_OBJS) $(TRACE_OBJS) \
         $(WB_OBJS) \
         $(STUBS)))
$(DEPS):
-include $(wildcard $(DEPS))

$(CORE_LIB): $(CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(VOLUME_LIB): $(VOLUME_OBJS)
	rm -f $@ && ar rcs $@ $^

$(PLUGIN): $(PLUGIN_SRCS:.c=.o) $(VOLUME_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(PLUGIN_SRCS:.c=.o) $(VOLUME_LIB) \
	  $(CORE_LIB) $(LDLIBS_ALL)

$(FILTER): $(FILTER_SRCS:.c=.o) $(VOLUME_LIB) $(CORE_LIB)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(FILTER_SRCS:.c=.o) $(VOLUME_LIB) \
	  $(CORE_LIB) $(LDLIBS_ALL)

tests/unit/test-%: tests/unit/test-%.c $(wildcard tests/unit/*.h) \
    tests/nbdkit-stubs.h $(VOLUME_LIB) $(CORE_LIB) $(STUBS) $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(STUBS) $(VOLUME_LIB) $(CORE_LIB) \
	  $(LDLIBS_ALL)

# nbdkit's command line as the plugin reads it, without nbdkit.
tests/unit/test-cmdline: tests/unit/test-cmdline.c volume/params/cmdline.c \
    volume/params/cmdline.h tests/unit/check.h $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -o $@ $< volume/params/cmdline.c

# The fuzz targets replayed over their corpora and past crashes, built
# with the ordinary compiler: fuzz/stubs.c stands in for nbdkit.
FUZZ_NAMES  = table cipher-spec params control-proto fvault2 tcrypt cipher-bulk \
              bitlk integrity reencrypt token
FUZZ_COMMON = fuzz/stubs.c volume/params/config.c volume/params/confignum.c \
              volume/params/names.c volume/params/secrets.c backend/kseries.c
tests/unit/test-fuzz-regressions: tests/unit/test-fuzz-regressions.c \
    $(FUZZ_NAMES:%=fuzz/fuzz-%.c) $(FUZZ_COMMON) fuzz/fuzz.h \
    fuzz/cipher-reference.h $(CORE_LIB) $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -DFUZZ_REPLAY_ALL -o $@ $< \
	  $(FUZZ_NAMES:%=fuzz/fuzz-%.c) $(FUZZ_COMMON) $(CORE_LIB) $(LDLIBS_ALL)

tools/%: tools/%.c $(CORE_LIB) $(STUBS) $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) $(NBD_CFLAGS) -o $@ $< $(STUBS) $(CORE_LIB) \
	  $(LDLIBS_ALL) $(NBD_LIBS)

tools/dmcryptctl: tools/dmcryptctl.c $(CTL_OBJS) $(CORE_LIB) $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(CTL_OBJS) $(CORE_LIB) $(LDLIBS_ALL)

$(TRACE_OBJS): $(wildcard tools/trace/*.h)
tools/dmcrypt-trace: tools/dmcrypt-trace.c $(TRACE_OBJS) \
    $(wildcard tools/trace/*.h) $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TRACE_OBJS)

tools/writeback: tools/writeback.c $(WB_OBJS) $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) $(NBD_CFLAGS) -o $@ $< $(WB_OBJS) $(NBD_LIBS) -lm
tests/unit/test-writeback: tests/unit/test-writeback.c $(WB_OBJS) \
    tests/unit/check.h $(BUILD_FLAGS)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(WB_OBJS) -lm

man: plugin/nbdkit-dmcrypt-plugin.1 filter/nbdkit-dmcrypt-filter.1 \
  tools/dmcryptctl.1

tools/dmcryptctl.1: tools/dmcryptctl.pod
	pod2man --section=1 --center="dmcrypt" --release="dmcrypt" \
	  --name=dmcryptctl $< > $@

plugin/nbdkit-dmcrypt-plugin.1: plugin/nbdkit-dmcrypt-plugin.pod
	pod2man --section=1 --center="nbdkit" --release="dmcrypt" \
	  --name=nbdkit-dmcrypt-plugin $< > $@

filter/nbdkit-dmcrypt-filter.1: filter/nbdkit-dmcrypt-filter.pod
	pod2man --section=1 --center="nbdkit" --release="dmcrypt" \
	  --name=nbdkit-dmcrypt-filter $< > $@

deps:
	@tools/install-deps.sh

check: deps
	$(MAKE) all
	@tests/run-tests.sh

check-user: all
	@tools/check-as-user.sh

check-filter: deps
	$(MAKE) all
	@DMCRYPT_FRONTEND=filter tests/run-tests.sh

# The suite with every long test run whole (tests/functions.sh: full_run).
check-full: deps
	$(MAKE) all
	@DMCRYPT_TEST_FULL=1 tests/run-tests.sh

check-unit: all
	@tests/run-tests.sh unit

# Debian's kernel in QEMU: dm-crypt and the NBD client against dmcrypt.
check-kernel: deps
	$(MAKE) all
	@tests/run-tests.sh test-kernel-

check-asan: deps
	$(MAKE) clean
	$(MAKE) all CFLAGS="-O1 -g" \
	  SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
	@DMCRYPT_SANITIZER=asan tests/run-tests.sh

check-tsan: deps
	$(MAKE) clean
	$(MAKE) all CFLAGS="-O1 -g" SANFLAGS="-fsanitize=thread"
	@DMCRYPT_SANITIZER=tsan tests/run-tests.sh

# libFuzzer builds live apart (FUZZ_BUILD), every object instrumented.
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= fuzz/build
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_CFLAGS  = -std=gnu11 -Wall -Wextra -pthread -D_GNU_SOURCE $(PKG_CFLAGS) \
               -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined
FUZZ_SRCS    = $(sort $(wildcard crypto/*.c table/*.c control/*.c \
                                 luks/fvault2-*.c luks/tcrypt-hdr.c \
                                 luks/bitlk-*.c luks/reenc-*.c luks/token-json.c \
                                 integrity/*.c)) \
               $(FUZZ_COMMON)
FUZZ_OBJS    = $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(FUZZ_SRCS))

$(FUZZ_BUILD)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/libfuzzcore.a: $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/fuzz/fuzz-%.o $(FUZZ_BUILD)/libfuzzcore.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

fuzz-build: $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz-%)
.SECONDARY: $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz/fuzz-%.o)

fuzz: fuzz-build
	@fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_NAMES)

fuzz-smoke: fuzz-build
	@fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS) $(FUZZ_NAMES)

demo: deps
	$(MAKE) all
	@tools/demo.sh

bench: deps
	$(MAKE) all
	@tools/bench.sh

# The server's CPU per GiB in units of openssl's XTS price, in a minute
# or two (tools/bench-cpu.sh; make bench has the full matrix).
bench-cpu: $(PLUGIN)
	@tools/bench-cpu.sh --quick

# tools/lab reads QUICK, LAB_OUT and the other LAB_* settings from the
# environment, where make puts command-line variables too.
lab: $(PLUGIN) tools/dmcrypt-trace tools/seeker tools/writeback
	@tools/lab $(LAB_EXPERIMENTS)

install: $(PLUGIN) $(FILTER)
	install -d $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(FILTERDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BINDIR)
	install -m 0755 $(PLUGIN) $(DESTDIR)$(PLUGINDIR)/
	install -m 0755 $(FILTER) $(DESTDIR)$(FILTERDIR)/
	install -m 0644 plugin/nbdkit-dmcrypt-plugin.1 \
	  filter/nbdkit-dmcrypt-filter.1 $(DESTDIR)$(MANDIR)/man1/
	-install -m 0644 tools/dmcryptctl.1 $(DESTDIR)$(MANDIR)/man1/
	for t in $(USER_TOOLS); do install -m 0755 $$t $(DESTDIR)$(BINDIR)/; done

clean:
	rm -f $(CORE_OBJS) $(CORE_LIB) $(VOLUME_OBJS) $(VOLUME_LIB) \
	  plugin/*.o $(PLUGIN) $(STUBS) \
	  $(DEPS) \
	  filter/*.o $(FILTER) filter/nbdkit-dmcrypt-filter.1 \
	  $(UNIT_BINS) $(TOOL_BINS) plugin/nbdkit-dmcrypt-plugin.1 \
	  $(CTL_OBJS) $(TRACE_OBJS) $(WB_OBJS) tools/dmcryptctl.1 $(BUILD_FLAGS)
	rm -rf fuzz/build
