# dshbox: one non-recursive GNU Makefile.
#   make                 build build/dshbox, build/libdshbox.a and build/libdshbox.so
#   make test            unit, integration and escape tests (Criterion)
#   make check-asan      the tests built with ASan+UBSan (SANITIZE=address,undefined)
#   make lint            the layering, cppcheck over the sources, and that libdshbox.so exports
#                        what include/dshbox/ marks DSH_PUBLIC, no more (tools/check-exports.sh)
#   make bench           benchmarks (never timed assertions)
#   make soak            an embedder's soak: SOAK_RUNS dsh_run() calls from a threaded C host, then
#                        2,000 commands through clients/node with aborts; nothing may leak (docs/HACKING.md)
#   make install PREFIX=/usr/local DESTDIR=
#   make windows         the Windows runner with mingw-w64
#   make vmtest KERNEL=  dshbox under QEMU on another kernel (docs/vmtest.md)
#   make test-containers dshbox in Podman: rootful, rootless, two seccomp profiles (docs/containers.md)
# Knobs: SANITIZE=address,undefined  BUILD=dir  V=1

PREFIX ?= /usr/local
space := $(subst ,, )
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

CC ?= cc
PKG_CONFIG ?= pkg-config
ifneq ($(SANITIZE),)
BUILD ?= build-san
else
BUILD ?= build
endif

PKGS := libseccomp libcap-ng libnl-3.0 libnl-route-3.0 yaml-0.1 jansson libidn2 libevent_core libevent_extra
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS))
# libmount reads mount tables for the integration suite only (the tree test parses the sandbox's
# mountinfo with it); neither dshbox nor libdshbox links it: a run never reads a mount table.
# Deferred (=): a package build, which builds no tests, needs neither libmount-dev nor Criterion.
MOUNT_CFLAGS = $(shell $(PKG_CONFIG) --cflags mount)
MOUNT_LIBS = $(shell $(PKG_CONFIG) --libs mount)
# dshbox itself links the small libraries statically where their archives exist: the dynamic
# loader's work per library is ~12% of `dshbox run -- true` (docs/run.md).  STATIC_LIBS=0: all shared.
STATIC_LIBS ?= 1
STATIC_A := $(if $(filter 1,$(STATIC_LIBS)),$(foreach n,seccomp nl-route-3 nl-3 yaml jansson cap-ng idn2 unistring event_extra event_core,$(if $(filter-out lib$(n).a,$(shell $(CC) -print-file-name=lib$(n).a)),$(n))))
STATIC_LINK := -Wl,-Bstatic $(addprefix -l,$(STATIC_A)) -Wl,-Bdynamic
DSHBOX_LIBS := $(if $(STATIC_A),$(STATIC_LINK)) $(filter-out $(addprefix -l,$(STATIC_A)),$(PKG_LIBS))
# With STATIC_LIBS=1 the C library goes in too, as a static PIE (still loaded at a random address):
# mapping libc and binding its symbols in every process of a start was about a quarter of the CPU
# time of `dshbox run -- true` (docs/performance.md).  Not under a sanitizer (its runtime is a
# shared library) nor where libc.a or one of the archives above is missing.  glibc's link-time notes on the name-service
# calls libnl and libcap-ng reference (dshbox calls none) are silenced where ld can.
STATIC_LIBC := $(if $(and $(filter 1,$(STATIC_LIBS)),$(filter 10,$(words $(STATIC_A))),$(if $(SANITIZE),,1)),$(if $(filter-out libc.a,$(shell $(CC) -print-file-name=libc.a)),1))
comma := ,
DSHBOX_LIBS := $(if $(STATIC_LIBC),$(PKG_LIBS),$(DSHBOX_LIBS))
DSHBOX_LDFLAGS := $(if $(STATIC_LIBC),-static-pie $(shell echo 'int main(void) { return 0; }' | \
	$(CC) -Wl,--no-warnings -x c - -o /dev/null >/dev/null 2>&1 && echo -Wl$(comma)--no-warnings))
CRITERION_LIBS = $(shell $(PKG_CONFIG) --libs criterion)

TOP := $(abspath .)
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror -Wswitch-enum -Wmissing-prototypes -Wstrict-prototypes \
	-Wformat=2 -Wno-format-nonliteral -Wshadow -Wundef -Wvla
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -fPIC -pipe -I$(TOP) -I$(TOP)/include $(PKG_CFLAGS) \
	-MMD -MP -fno-strict-aliasing -fstack-protector-strong -D_FORTIFY_SOURCE=2
ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif
ALL_CFLAGS := $(BASE_CFLAGS) $(WARNINGS) $(CFLAGS)
# Criterion's macros define functions without prototypes; tests get the warning set minus that.
TEST_CFLAGS = $(BASE_CFLAGS) $(MOUNT_CFLAGS) $(filter-out -Wmissing-prototypes,$(WARNINGS)) $(CFLAGS) \
	-DDSH_TOP='"$(TOP)"' -DDSH_BUILD='"$(abspath $(BUILD))"'

ifeq ($(V),)
Q := @
quiet = @printf '  %-6s %s\n' $(1) $(2);
else
Q :=
quiet =
endif

# The library: every mechanism, backend and the policy engine.  Files ending in _win.c are the
# Windows-only appliers (make windows).
LIB_DIRS := common policy net ns landlock seccomp fence broker seatbelt winacl supervisor bwrap
LIB_SRCS := $(filter-out %_win.c,$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
CLI_SRCS := $(wildcard cli/*.c)
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)
INTEG_SRCS := $(wildcard tests/integration/*.c)
ESCAPE_SRCS := $(wildcard tests/escape/*.c)
BENCH_SRCS := $(wildcard tools/bench/*.c)
# Small programs the tests run inside sandboxes (probes and attacks).
HELPER_SRCS := $(wildcard tests/helpers/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
LIB_OBJS := $(call obj,$(LIB_SRCS))
CLI_OBJS := $(call obj,$(CLI_SRCS))
TESTLIB_OBJS := $(call obj,$(TESTLIB_SRCS))
UNIT_OBJS := $(call obj,$(UNIT_SRCS))
INTEG_OBJS := $(call obj,$(INTEG_SRCS))
ESCAPE_OBJS := $(call obj,$(ESCAPE_SRCS))
HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/helpers/%,$(HELPER_SRCS))
BENCHES := $(patsubst tools/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# The seccomp programs, generated once at build time (seccomp/seccomp.h, tools/gen_seccomp.c).
GEN_SECCOMP := $(BUILD)/tools/gen_seccomp
PREBUILT_OBJ := $(BUILD)/gen/seccomp_prebuilt.o
LIB_OBJS += $(PREBUILT_OBJ)

VERSION := $(shell sed -n 's/^\#define DSHBOX_VERSION "\(.*\)"$$/\1/p' include/dshbox/version.h)
# The shared library: the same (PIC) objects as the archive, linked with a soname.  It exports the
# DSH_PUBLIC declarations of include/dshbox/ (-fvisibility=hidden, below); its version script
# (tools/libdshbox.map) versions them and keeps any name outside dsh_ local.  The soname's number
# is DSHBOX_ABI (include/dshbox/version.h).
SOVERSION := $(shell sed -n 's/^\#define DSHBOX_ABI \([0-9]*\)$$/\1/p' include/dshbox/version.h)
SONAME := libdshbox.so.$(SOVERSION)
LIBA := $(BUILD)/libdshbox.a
LIBSO := $(BUILD)/libdshbox.so.$(VERSION)
DSHBOX := $(BUILD)/dshbox
UNIT := $(BUILD)/tests/unit.run
INTEG := $(BUILD)/tests/integration.run
ESCAPE := $(BUILD)/tests/escape.run

.PHONY: all test test-unit test-integration test-escape test-srt test-codex check-asan lint bench install clean windows tests
all: $(DSHBOX) $(LIBA) $(LIBSO)

$(BUILD)/tests/%.o $(BUILD)/tools/%.o: Q_CFLAGS = $(TEST_CFLAGS)
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)$(CC) $(if $(Q_CFLAGS),$(Q_CFLAGS),$(ALL_CFLAGS)) -c -o $@ $<

ifeq ($(GEN_ARCH),)
$(GEN_SECCOMP): $(BUILD)/tools/gen_seccomp.o $(BUILD)/tools/gen_seccomp_none.o $(BUILD)/seccomp/seccomp.o \
		$(BUILD)/common/error.o
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
GEN_RUN :=
else
# A cross build (make cross): the generator is built for the target and run under qemu-user, so
# that libseccomp's native architecture is the target's: a call its name table does not know yet
# (open_tree_attr) goes in by number, as in a native build, where translating it from this
# machine's numbers would fail.
$(GEN_SECCOMP): $(BUILD)/tools/gen_seccomp.o $(BUILD)/tools/gen_seccomp_none.o $(BUILD)/seccomp/seccomp.o \
		$(BUILD)/common/error.o
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
GEN_RUN := qemu-$(GEN_ARCH) -L /usr/$(GEN_ARCH)-linux-gnu
endif
$(BUILD)/gen/seccomp_prebuilt.c: $(GEN_SECCOMP)
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@)ASAN_OPTIONS=detect_leaks=0 $(GEN_RUN) $(GEN_SECCOMP) > $@.tmp && mv $@.tmp $@
$(PREBUILT_OBJ): $(BUILD)/gen/seccomp_prebuilt.c
	$(call quiet,CC,$<)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The library's objects hide every symbol but those its public headers mark DSH_PUBLIC
# (include/dshbox/export.h): what libdshbox.so exports is what include/dshbox/ declares, checked by
# tools/check-exports.sh.  Only the shared library sees a difference; the archive's objects still
# link into dshbox and the tests whole.  Every object depends on export.h, whose rule it is: an
# object compiled before the rule (or under another one) is compiled again.
$(LIB_OBJS): ALL_CFLAGS += -fvisibility=hidden
$(LIB_OBJS): include/dshbox/export.h

$(LIBA): $(LIB_OBJS)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

# -z defs: a symbol the library uses but none of its dependencies defines fails here, not in a
# host's link.  The sanitizers' runtimes are the executable's to bring, so not under SANITIZE.
$(LIBSO): $(LIB_OBJS) tools/libdshbox.map
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=tools/libdshbox.map $(if $(SANITIZE),,-Wl,-z,defs) -o $@ $(LIB_OBJS) $(PKG_LIBS)
	$(Q)ln -sf $(notdir $@) $(BUILD)/$(SONAME) && ln -sf $(SONAME) $(BUILD)/libdshbox.so

$(DSHBOX): $(CLI_OBJS) $(LIBA)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) $(DSHBOX_LDFLAGS) -o $@ $(CLI_OBJS) $(LIBA) $(DSHBOX_LIBS)

$(UNIT): $(UNIT_OBJS) $(TESTLIB_OBJS) $(LIBA)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(TESTLIB_OBJS) $(LIBA) $(PKG_LIBS) $(CRITERION_LIBS)
$(INTEG): $(INTEG_OBJS) $(TESTLIB_OBJS) $(LIBA)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $(INTEG_OBJS) $(TESTLIB_OBJS) $(LIBA) $(PKG_LIBS) $(MOUNT_LIBS) $(CRITERION_LIBS)
$(ESCAPE): $(ESCAPE_OBJS) $(TESTLIB_OBJS) $(LIBA)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $(ESCAPE_OBJS) $(TESTLIB_OBJS) $(LIBA) $(PKG_LIBS) $(CRITERION_LIBS)

# Helpers run inside sandboxes: static where they attack the kernel directly, never sanitized
# (the sanitizer runtimes do not survive seccomp and a fresh mount tree).
$(BUILD)/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -I$(TOP) -o $@ $< $(PKG_LIBS)

$(BUILD)/bench/%: $(BUILD)/tools/bench/%.o $(LIBA)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $< $(LIBA) $(PKG_LIBS)

# The soak host (tests/soak/): a program outside the library, so it links libdshbox.so as an
# embedder does and sees only what the library exports.  The integration suite runs it small.
SOAK_HOST := $(BUILD)/soak/soak_host
$(SOAK_HOST): $(BUILD)/tests/soak/soak_host.o $(LIBSO)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD) -ldshbox -Wl,-rpath,$(abspath $(BUILD)) -lpthread

tests: $(DSHBOX) $(HELPERS) $(SOAK_HOST) $(if $(UNIT_SRCS),$(UNIT)) $(if $(INTEG_SRCS),$(INTEG)) $(if $(ESCAPE_SRCS),$(ESCAPE))

# Criterion runs each test in its own process; -j2 matches the 2-core machines.  Each suite runs
# under tools/run-suite.sh: SUITE_LIMIT seconds at most (a hung test fails it by name), its whole
# log in $(BUILD)/logs/.  A suite takes 1-6 minutes here; the bound is for a hang, not for speed.
CRITERION_ARGS ?= -j2
SUITE_LIMIT ?= 1800
suite = tools/run-suite.sh $(1) $(SUITE_LIMIT) $(BUILD)/logs/$(1).log
test: test-unit test-integration test-escape test-srt test-codex
test-unit: tests
	$(if $(UNIT_SRCS),$(call suite,unit) $(UNIT) $(CRITERION_ARGS),@echo "no unit tests")
test-integration: tests
	$(if $(INTEG_SRCS),$(call suite,integration) $(INTEG) $(CRITERION_ARGS) $(INTEG_ARGS),@echo "no integration tests")
test-escape: tests
	$(if $(ESCAPE_SRCS),$(call suite,escape) $(ESCAPE) $(CRITERION_ARGS),@echo "no escape tests")
# Anthropic's sandbox-runtime from npm, its bwrap being dshbox (a printed skip without the registry).
test-srt: $(DSHBOX)
	tests/srt/run.sh $(BUILD)
# The Codex CLI from npm, `codex sandbox` with dshbox as its bwrap (a printed skip without the registry).
test-codex: $(DSHBOX)
	tests/codex/run.sh $(BUILD)
# bubblewrap's own tests/test-run.sh (apt-get source bubblewrap, fetched at test time) with real
# bubblewrap and with dshbox as bwrap, every case counted (docs/bwrap.md).  Not part of `make test`.
.PHONY: test-bwrap-suite
test-bwrap-suite: $(DSHBOX)
	tests/bwrap-suite/run.sh $(BUILD)
# dshbox in Podman with runc over a debootstrapped Debian 12, as root (docs/containers.md); rows
# whose container cannot start here are printed skips.  Not part of `make test`.
.PHONY: test-containers
test-containers: tests
	tests/containers/run.sh $(BUILD)

# The sanitizer build runs every unit and integration test except the two stress suites (200 kill
# trials, 30,000 racing writes): they exercise no code the others do not, and under ASan they take
# most of CI's time.  They run in the plain builds, as root and unprivileged.  Nor threaded_host:
# it forks while other threads allocate, which glibc's malloc survives (its fork handler) and the
# sanitizer's allocator in GCC 12 does not (no lock taken around fork: a child can inherit a
# region lock held, and waits on it forever, seen in CI).  It tests the host's real allocator, so
# it runs in the plain builds only.  threaded_outcome too: its two threads fork while the other allocates.
# Nor soak: a threaded host as well, whose memory figures are the real allocator's.
check-asan:
	LSAN_OPTIONS=suppressions=$(TOP)/tools/lsan.supp:print_suppressions=0 \
		$(MAKE) SANITIZE=address,undefined test-unit test-integration \
		INTEG_ARGS="--filter '!(fence_kill|fence_race|threaded_host|threaded_outcome|soak)/*'"

lint: $(DSHBOX) $(LIBSO)
	tools/check-layers.sh $(BUILD)
	tools/check-exports.sh $(LIBSO)
	cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
		--inline-suppr --suppress=missingIncludeSystem --suppress=unknownMacro \
		-I include -I . -D__GNUC__ -D_GNU_SOURCE $(LIB_DIRS) cli

bench: $(DSHBOX) $(BENCHES) $(HELPERS)
	tools/bench.sh $(BUILD)

# An embedder's soak (issue 38): the C host makes SOAK_RUNS runs (default 10000) from two threads,
# then the Node client runs SOAK_NODE_RUNS commands (default 2000) with aborts and timeouts; each
# compares what it holds after a warm-up with what it holds at the end, prints the figures, and
# fails on a leak (docs/HACKING.md).  Minutes, not seconds: not part of `make test`, whose
# integration (soak/*) and Node suites run the same checks small.
SOAK_RUNS ?= 10000
SOAK_NODE_RUNS ?= 2000
.PHONY: soak
soak: $(SOAK_HOST) $(DSHBOX)
	SOAK_RUNS=$(SOAK_RUNS) $(SOAK_HOST)
	@if command -v node >/dev/null; then set -x; \
		DSHBOX=$(abspath $(DSHBOX)) node --expose-gc clients/node/soak.js $(SOAK_NODE_RUNS); \
	else echo "soak: SKIP the Node half: no node on the PATH"; [ "$${DSHBOX_TEST_NO_SKIP:-0}" != 1 ]; fi

# --- Installing and packaging -------------------------------------------------------------------
#   make install PREFIX=/usr/local DESTDIR=   the program, libdshbox.a, libdshbox.so with its soname
#                                             links, headers, libdshbox.pc, man pages, bash and zsh
#                                             completions
#   make install-apparmor                     the AppArmor profile (Ubuntu 24.04+), into /etc/apparmor.d
#   make check-install                        install into a scratch DESTDIR, build a program against
#                                             it with pkg-config twice (the archive, the shared
#                                             library) and run both (docs/packaging.md)
#   make check-apparmor                       apparmor_parser -QT on the profile, if a parser exists
#   make check-completions                    the completions know every command and option of cli/
#   make check-packaging                      the three checks above (about a second on a built tree)
#   make deb                                  build/dshbox_*.deb, build/libdshbox0_*.deb and
#                                             build/libdshbox-dev_*.deb, lintian
DATADIR ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
SYSCONFDIR ?= /etc
# libdir and includedir are written relative to ${prefix} when they lie under it: the file then
# moves with its prefix line (check-install rewrites that one line to use the staged tree).
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

.PHONY: install install-apparmor check-install check-apparmor check-completions check-packaging deb
install: $(DSHBOX) $(LIBA) $(LIBSO)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@REQUIRES@|$(PKGS)|' tools/libdshbox.pc.in > $(BUILD)/libdshbox.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/dshbox $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(DSHBOX) $(DESTDIR)$(BINDIR)/dshbox
	install -m 0644 $(LIBA) $(DESTDIR)$(LIBDIR)/libdshbox.a
	install -m 0644 $(LIBSO) $(DESTDIR)$(LIBDIR)/$(notdir $(LIBSO))
	ln -sf $(notdir $(LIBSO)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libdshbox.so
	install -m 0644 include/dshbox/*.h $(DESTDIR)$(INCLUDEDIR)/dshbox/
	install -m 0644 $(BUILD)/libdshbox.pc $(DESTDIR)$(PKGCONFIGDIR)/libdshbox.pc
	install -m 0644 man/dshbox.1 $(DESTDIR)$(MANDIR)/man1/dshbox.1
	install -m 0644 man/dshbox.yml.5 $(DESTDIR)$(MANDIR)/man5/dshbox.yml.5
	install -m 0644 tools/completions/dshbox.bash $(DESTDIR)$(BASHCOMPDIR)/dshbox
	install -m 0644 tools/completions/_dshbox $(DESTDIR)$(ZSHCOMPDIR)/_dshbox

# The profile names the binary by path; installed elsewhere than /usr/bin, it follows BINDIR.
install-apparmor:
	install -d $(DESTDIR)$(SYSCONFDIR)/apparmor.d
	sed 's|/usr/bin/dshbox|$(BINDIR)/dshbox|' tools/apparmor/dshbox > $(DESTDIR)$(SYSCONFDIR)/apparmor.d/dshbox
	chmod 0644 $(DESTDIR)$(SYSCONFDIR)/apparmor.d/dshbox

# The staged libdshbox.pc says prefix=/usr; the copy the test reads points prefix at the staged tree
# (pkg-config's --define-variable and PKG_CONFIG_SYSROOT_DIR would move the dependencies' paths too).
# The program is linked twice, against the archive (--static between -Bstatic and -Bdynamic, as
# libdshbox.pc says) and against the shared library, which it then loads from the staged tree;
# readelf proves each link took the library it was meant to.
CHECK_INSTALL := $(abspath $(BUILD))/check-install
check-install:
	rm -rf $(CHECK_INSTALL)
	$(MAKE) --no-print-directory install DESTDIR=$(CHECK_INSTALL)/root PREFIX=/usr
	mkdir -p $(CHECK_INSTALL)/pc
	sed 's|^prefix=/usr$$|prefix=$(CHECK_INSTALL)/root/usr|' $(CHECK_INSTALL)/root/usr/lib/pkgconfig/libdshbox.pc \
		> $(CHECK_INSTALL)/pc/libdshbox.pc
	cd $(CHECK_INSTALL) && export PKG_CONFIG_PATH=$(CHECK_INSTALL)/pc && \
		$(CC) -Werror -Wall -o check-install-static $(TOP)/tools/check-install.c \
		$$($(PKG_CONFIG) --cflags libdshbox) -Wl,-Bstatic $$($(PKG_CONFIG) --libs --static libdshbox) -Wl,-Bdynamic && \
		$(CC) -Werror -Wall -o check-install-shared $(TOP)/tools/check-install.c \
		$$($(PKG_CONFIG) --cflags --libs libdshbox)
	! readelf -d $(CHECK_INSTALL)/check-install-static | grep -q 'libdshbox'
	readelf -d $(CHECK_INSTALL)/check-install-shared | grep -q 'NEEDED.*\[$(SONAME)\]'
	cd $(CHECK_INSTALL) && ./check-install-static
	cd $(CHECK_INSTALL) && LD_LIBRARY_PATH=$(CHECK_INSTALL)/root/usr/lib ./check-install-shared
	rm -rf $(CHECK_INSTALL)

check-apparmor:
	tools/check-apparmor.sh tools/apparmor/dshbox

check-completions:
	tools/check-completions.sh

check-packaging: check-install check-apparmor check-completions

deb:
	tools/make-deb.sh $(BUILD)

# The Windows runner links the portable library it shares with explain: policy/ (rules, expansion,
# resolution, globs) and the winacl plan compiler, so that what explain describes is what runs.
# Left out: what needs libyaml (config.c, doctor.c; config_defaults.c has the defaults), the regex
# reference matcher (glob_regex.c; no <regex.h> in mingw-w64) and the POSIX twin of a *_win.c seam
# (realpath.c).  compat_win.h supplies the GNU string functions mingw's C library lacks.
MINGW_CC ?= x86_64-w64-mingw32-gcc
WIN_POSIX_ONLY := policy/netpattern.c policy/config.c policy/doctor.c policy/glob_regex.c policy/realpath.c policy/program.c
# Linux only: kernel-tight resolution (openat2, /proc/self/fd), descriptor passing, the timing clock.
WIN_COMMON_LINUX_ONLY := common/resolve.c common/fdpass.c common/timing.c
WIN_SRCS := $(wildcard winacl/*_win.c) winacl/plan.c winacl/compile.c \
	$(filter-out $(WIN_POSIX_ONLY),$(wildcard policy/*.c)) $(filter-out $(WIN_COMMON_LINUX_ONLY),$(wildcard common/*.c))
WIN_CFLAGS := -std=gnu11 -D_GNU_SOURCE -D__USE_MINGW_ANSI_STDIO=1 -include common/compat_win.h -municode \
	-O2 $(WARNINGS) -I$(TOP) -I$(TOP)/include
windows: $(BUILD)/windows/dshbox-winrun.exe
$(BUILD)/windows/dshbox-winrun.exe: $(WIN_SRCS) $(wildcard common/*.h policy/*.h winacl/*.h include/dshbox/*.h)
	@mkdir -p $(dir $@)
	$(call quiet,MINGW,$@)$(MINGW_CC) $(WIN_CFLAGS) -o $@ $(WIN_SRCS) -ladvapi32

# ---- vmtest: dshbox on other kernels, under QEMU (tools/vmtest/, docs/vmtest.md) ----
#   make vmtest KERNEL=6.1     one matrix row; KERNEL=5.10|6.1|6.12|7.x|/path/to/bzImage
#   make vmtest-all            every Debian series below
#   make vmtest-ci             the rows .ci/run runs (5.10 6.1: ~30 min with TCG)
# Knobs: VMTEST_FULL=1, VMTEST_MODULES=dir (a bzImage's modules), VMTEST_TIMEOUT=s,
# VMTEST_ACCEL=kvm, VMTEST_REFRESH=1.
VMTEST_ALL ?= 5.10 6.1 6.12 7.x
VMTEST_CI ?= 5.10 6.1
.PHONY: vmtest vmtest-all vmtest-ci
vmtest: tests
	@test -n "$(KERNEL)" || { echo "usage: make vmtest KERNEL=5.10|6.1|6.12|7.x|/path/to/bzImage" >&2; exit 2; }
	tools/vmtest/vmtest.sh $(BUILD) $(KERNEL)
vmtest-all: tests
	tools/vmtest/vmtest.sh $(BUILD) $(VMTEST_ALL)
vmtest-ci: tests
	tools/vmtest/vmtest.sh $(BUILD) $(VMTEST_CI)

# ---- cross: another architecture Debian builds (docs/HACKING.md) ----
#   make cross ARCH=aarch64        build/aarch64/dshbox, its libraries and test binaries, with
#                                  Debian's cross compiler (tools/install-cross-deps.sh aarch64)
#   make cross-test ARCH=aarch64   the unit suite in an aarch64 VM (tools/vmtest/arm64.sh)
# riscv64: Debian 12 builds it only in debian-ports, so no -dev packages to link: refused below.
CROSS_ARCHES := aarch64
BUILD_CC ?= cc
BUILD_PKG_CONFIG ?= pkg-config
CROSS_DEBARCH_aarch64 := arm64
CROSS_LIBDIR = /usr/lib/$(ARCH)-linux-gnu
# Criterion, unpacked beside the system by tools/install-cross-deps.sh (apt cannot install it for
# another architecture next to the native one on Debian 12); DT_RPATH (not RUNPATH) so that its
# own libnanomsg is found there too.
CROSS_CRITERION = /opt/dshbox-cross/$(CROSS_DEBARCH_$(ARCH))$(CROSS_LIBDIR)
CROSS_MAKE = $(MAKE) --no-print-directory BUILD=build/$(ARCH) CC=$(ARCH)-linux-gnu-gcc GEN_ARCH=$(ARCH) \
	BUILD_CC=$(BUILD_CC) BUILD_PKG_CONFIG=$(BUILD_PKG_CONFIG) \
	PKG_CONFIG="env PKG_CONFIG_LIBDIR=$(CROSS_LIBDIR)/pkgconfig:$(CROSS_CRITERION)/pkgconfig:/usr/share/pkgconfig $(BUILD_PKG_CONFIG)" \
	CRITERION_LIBS="-L$(CROSS_CRITERION) -Wl,--disable-new-dtags,-rpath,$(CROSS_CRITERION) -lcriterion"
# Left out of cross-test, which runs on an aarch64 kernel: seccomp_program reads the programs
# with x86-64's numbers and architecture; seccomp/refuses_with_errno_and_never_kills calls an
# x32 number (x86-64 only).  cross-test prints this list.
CROSS_UNIT_EXCLUDE := seccomp_program/* seccomp/refuses_with_errno_and_never_kills
.PHONY: cross cross-test cross-check-arch
cross-check-arch:
	@case " $(CROSS_ARCHES) :$(ARCH)" in *" $(ARCH) "*) ;; \
	*:riscv64) echo "make cross: riscv64: Debian 12 has no riscv64 -dev packages (debian-ports only): no libseccomp to link against" >&2; exit 2 ;; \
	*) echo "usage: make cross ARCH=aarch64 (these build: $(CROSS_ARCHES))" >&2; exit 2 ;; esac
	@command -v $(ARCH)-linux-gnu-gcc >/dev/null && test -e $(CROSS_CRITERION)/libcriterion.so || \
		{ echo "make cross: run tools/install-cross-deps.sh $(ARCH) first" >&2; exit 2; }
cross: cross-check-arch
	+$(CROSS_MAKE) all tests
# Not under qemu-user: Debian 12's qemu 7.2 spins forever in an aarch64 program that starts a
# thread on the CI machine's kernel, and Criterion's runner starts one (docs/HACKING.md).  A
# full-system VM (qemu-system-aarch64, TCG, Debian 12's arm64 kernel) runs it instead.
cross-test: cross
	@echo "cross-test: not run: $(CROSS_UNIT_EXCLUDE) (see the Makefile)"
	tools/vmtest/arm64.sh build/$(ARCH) $(CRITERION_ARGS) --filter '!($(subst $(space),|,$(CROSS_UNIT_EXCLUDE)))'

# ---- fuzzing (make fuzz; tests/fuzz/, tools/fuzz.sh, docs/HACKING.md) -------------------------
# The library again with clang, -fsanitize=fuzzer-no-link,address,undefined, into $(FUZZ_BUILD)
# (clang's warnings are not gcc's: not errors here, the gcc build keeps -Werror), then one
# libFuzzer binary per tests/fuzz/fuzz_*.c, each run FUZZ_SECONDS on a copy of its seed corpus.
FUZZ_SECONDS ?= 30
# FUZZ_SEED=N: libFuzzer's seed fixed (CI), empty: random
FUZZ_SEED ?=
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
.PHONY: fuzz fuzz-build fuzz-harnesses
fuzz: fuzz-build
	FUZZ_SEED=$(FUZZ_SEED) tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_NAMES)
fuzz-build:
	$(MAKE) CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) SANITIZE=address,undefined STATIC_LIBS=0 \
		CFLAGS='-O1 -g -fsanitize=fuzzer-no-link -Wno-error' fuzz-harnesses
fuzz-harnesses: $(patsubst %,$(BUILD)/fuzz/%,$(FUZZ_NAMES))
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(LIBA)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(TEST_CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIBA) $(PKG_LIBS)
# ---- end of fuzzing ----------------------------------------------------------------------------

clean:
	rm -rf build build-san build-fuzz

# Not beneath containers/: tests/containers/run.sh keeps a Debian rootfs there, full of /etc/*.d.
-include $(shell find $(BUILD) -path $(BUILD)/containers -prune -o -name '*.d' -type f -print 2>/dev/null)
