# exa - one non-recursive GNU Makefile.
#
#   make            build build/exa
#   make run        install missing Debian packages, build, run the main job
#   make check      install test dependencies, build, run every test, then
#                   the suite again under ASan+UBSan
#   make check-unit / check-integration / sanitize / fuzz / bench / fmt
#   make lib        build/libexa.a, build/libexa.so and build/exa.pc
#   make install    PREFIX=/usr/local DESTDIR= : bin/exa, share/exa, the
#                   library, its headers (include/exa), lib/pkgconfig/exa.pc,
#                   the man pages (exa(1), exa-GROUP(1), exa-env(7)) and
#                   share/bash-completion/completions/exa
#
# Sources are found by wildcard: a new src/lib<name>/<file>.c joins libexa.a,
# a new tests/unit/test_<name>.c becomes a test binary, with no edit here.

BUILDDIR ?= build
PREFIX   ?= /usr/local
LIBDIR   := $(PREFIX)/lib
INCDIR   := $(PREFIX)/include
CC       ?= cc
SAN      ?=

# PKGS are linked; DL_PKGS are compiled against (their headers give the
# types) but dlopen()ed at run time by the commands that need them
# (libutil/dlib.h): libcurl by `exa worker` (libworker/dl_curl.c),
# libmicrohttpd by the HTTP listeners (server/dl_mhd.c), libnettle by the
# first SHA-256 (libutil/sha256.c), libcrypto by the first token or random
# draw (libutil/dl_crypto.c), so that no other
# command maps them and the twenty-odd libraries they pull in.
PKGS     := jansson sqlite3 yaml-0.1
DL_PKGS  := libmicrohttpd libcurl libcrypto nettle
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(DL_PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
            -Wstrict-prototypes -Wmissing-prototypes
OPT      ?= -O2 -g
CPPFLAGS += -Isrc -include src/libutil/banned.h \
            -DEXA_VERSION='"$(VERSION)"' \
            -DEXA_DATADIR='"$(PREFIX)/share/exa"' \
            -DEXA_SRCDIR='"$(CURDIR)"'
CFLAGS   += $(CSTD) $(WARN) $(OPT) $(PKG_CFLAGS) -MMD -MP
# libxgboost is dlopen()ed by libpipeline/forest.c, never linked; nor are
# DL_PKGS
LDLIBS   += $(PKG_LIBS) -ldl -lm -lpthread

ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

LIB_SRC  := $(sort $(wildcard src/lib*/*.c))
CMD_SRC  := $(sort $(wildcard src/cmd/*.c src/server/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_HELPERS := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILDDIR)/%.o)
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILDDIR)/%.o)
# the Facility console's files, compiled into exa as C arrays (server/console.h)
CONSOLE_ASSETS := $(sort $(wildcard src/server/console/*))
CONSOLE_GEN := $(BUILDDIR)/gen/console_assets.c
CMD_OBJ  += $(CONSOLE_GEN:.c=.o)
# the OpenAPI document of the REST API, compiled in (server/api.h)
OPENAPI_GEN := $(BUILDDIR)/gen/openapi_json.c
CMD_OBJ  += $(OPENAPI_GEN:.c=.o)
UNIT_OBJ := $(UNIT_HELPERS:%.c=$(BUILDDIR)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILDDIR)/tests/%)
LIBEXA   := $(BUILDDIR)/libexa.a
EXA      := $(BUILDDIR)/exa
# the shared library is built from its own -fPIC objects
PIC_OBJ  := $(LIB_SRC:%.c=$(BUILDDIR)/pic/%.o)
LIBEXA_SO := $(BUILDDIR)/libexa.so
EXA_PC   := $(BUILDDIR)/exa.pc
# installed headers: include/exa/*.h (the public entry points) and every
# library header but the private *_int.h, under include/exa/lib<name>/ so
# that their "libutil/strbuf.h" includes resolve with -I$(INCDIR)/exa
PUB_HDR  := $(sort $(wildcard include/exa/*.h))
LIB_HDR  := $(sort $(filter-out %_int.h src/libutil/banned.h,$(wildcard src/lib*/*.h)))

.SECONDARY:
.PHONY: all lib run check check-icount check-unit check-integration sanitize fuzz fuzz-build bench \
        fmt install deps test-deps clean
all: $(EXA) $(BUILDDIR)/man/.stamp

# Man pages and bash completion, generated from the command tables by the
# binary itself (exa debug commands, src/cmd/docgen.c); a page is
# written to a temporary file and renamed, so a failure leaves none.
$(BUILDDIR)/man/.stamp: $(EXA)
	@mkdir -p $(BUILDDIR)/man
	@for p in $$($(EXA) debug commands --format=list); do \
	    $(EXA) debug commands --format=man --page=$${p%.*} \
	        >$(BUILDDIR)/man/$$p.tmp && \
	    mv $(BUILDDIR)/man/$$p.tmp $(BUILDDIR)/man/$$p || exit 1; done
	@$(EXA) debug commands --format=bash >$(BUILDDIR)/man/exa.bash.tmp && \
	    mv $(BUILDDIR)/man/exa.bash.tmp $(BUILDDIR)/exa.bash-completion
	@touch $@

lib: $(LIBEXA) $(LIBEXA_SO) $(EXA_PC)

$(BUILDDIR)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

$(BUILDDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBEXA): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# -z defs: every symbol the library uses is in it or in a library it names
$(LIBEXA_SO): $(PIC_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libexa.so.$(SOMAJOR) -Wl,-z,defs \
	    -o $@ $^ $(LDLIBS)

# prefix is found from the .pc file's own place, so a DESTDIR or moved
# install tree works with PKG_CONFIG_PATH alone (pkg-config(1) pcfiledir)
$(EXA_PC): Makefile VERSION
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$${pcfiledir}/../..' \
	    'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: exa' \
	    'Description: exa core: clusters, schedulers, jobs, models (doc/libexa.md)' \
	    'Version: $(VERSION)' \
	    'Requires.private: $(PKGS)' \
	    'Cflags: -I$${includedir} -I$${includedir}/exa' \
	    'Libs: -L$${libdir} -lexa' \
	    'Libs.private: -ldl -lm -lpthread' >$@

$(CONSOLE_GEN): $(CONSOLE_ASSETS) scripts/embed-assets.sh
	@mkdir -p $(dir $@)
	scripts/embed-assets.sh $@ $(CONSOLE_ASSETS)

$(CONSOLE_GEN:.c=.o): $(CONSOLE_GEN) src/server/console.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(OPENAPI_GEN): doc/openapi.json scripts/embed-file.sh
	@mkdir -p $(dir $@)
	scripts/embed-file.sh $@ api_openapi_json doc/openapi.json

$(OPENAPI_GEN:.c=.o): $(OPENAPI_GEN)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(EXA): $(CMD_OBJ) $(LIBEXA)
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJ) $(LIBEXA) $(LDLIBS)

# a unit test may check exa against OpenSSL itself (test_cluster_run's
# SHA-256 oracle), so the tests link the libcrypto that exa dlopen()s
UNIT_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null)
$(BUILDDIR)/tests/%: tests/unit/%.c $(UNIT_OBJ) $(LIBEXA)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< \
	    $(UNIT_OBJ) $(LIBEXA) $(LDLIBS) $(UNIT_LIBS) -lcmocka

deps:
	@scripts/install-deps.sh build

test-deps:
	@scripts/install-deps.sh test
	@scripts/install-e2e.sh

# The main job on the embedded default: SQLite + the mock scheduler.
run: deps
	@$(MAKE) --no-print-directory all
	$(EXA) pipeline run --model JPCP --dataset PM100Dataset --dummy \
	    --dataset-path data/pm100-sample.csv

# The testbed is started once for both passes (scripts/check.sh).
check: test-deps
	@scripts/check.sh

# instruction counts of two small fixed inputs against bench/icount.txt
check-icount: $(EXA)
	@EXA=$(abspath $(EXA)) scripts/check-icount.sh

check-unit: $(UNIT_BIN)
	@scripts/run-unit.sh $(BUILDDIR)/tests $(UNIT_BIN)

check-integration: $(EXA)
	@EXA=$(abspath $(EXA)) scripts/run-integration.sh

# The whole suite again with AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize:
	@$(MAKE) --no-print-directory BUILDDIR=build/san SAN=1 OPT='-O1 -g' \
	    check-unit check-integration

FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=build/fuzz/%)
FUZZ_SECONDS ?= 20
# The libraries are compiled once for all targets (instrumented, with
# -fno-sanitize-recover so that a UBSan report is a crash libFuzzer counts)
# and each target links them; a target is fuzz/fuzz_<name>.c, its seeds
# fuzz/corpus/<name>/ (fuzz/README.md).
FUZZ_CFLAGS := $(CSTD) -Isrc -include src/libutil/banned.h $(PKG_CFLAGS) \
    -DEXA_VERSION='"$(VERSION)"' -DEXA_DATADIR='""' -DEXA_SRCDIR='""' \
    -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
    -fno-sanitize-recover=undefined
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o)
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<
build/fuzz/libexa-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^
build/fuzz/fuzz_%: fuzz/fuzz_%.c build/fuzz/libexa-fuzz.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
	    build/fuzz/libexa-fuzz.a $(LDLIBS)
# the router and REST API are front-end code: their target also links them
FUZZ_SERVER_OBJ := build/fuzz/obj/src/server/http.o \
    build/fuzz/obj/src/server/dl_mhd.o \
    build/fuzz/obj/src/server/api.o build/fuzz/obj/$(OPENAPI_GEN:.c=.o)
build/fuzz/fuzz_http_router: fuzz/fuzz_http_router.c $(FUZZ_SERVER_OBJ) \
    build/fuzz/libexa-fuzz.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_SERVER_OBJ) \
	    build/fuzz/libexa-fuzz.a $(LDLIBS)
fuzz-build: $(FUZZ_BIN)
fuzz: $(FUZZ_BIN)
	@scripts/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

bench: $(EXA)
	@EXA=$(abspath $(EXA)) scripts/run-bench.sh

fmt:
	git ls-files '*.c' '*.h' | xargs clang-format -i

install: $(EXA) $(BUILDDIR)/man/.stamp lib
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/exa \
	    $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/exa
	install -m 0755 $(EXA) $(DESTDIR)$(PREFIX)/bin/exa
	install -m 0644 data/pm100-sample.csv $(DESTDIR)$(PREFIX)/share/exa/
	install -m 0644 $(LIBEXA) $(DESTDIR)$(LIBDIR)/libexa.a
	install -m 0755 $(LIBEXA_SO) $(DESTDIR)$(LIBDIR)/libexa.so.$(VERSION)
	ln -sf libexa.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libexa.so.$(SOMAJOR)
	ln -sf libexa.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libexa.so
	install -m 0644 $(EXA_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/exa.pc
	install -m 0644 $(PUB_HDR) $(DESTDIR)$(INCDIR)/exa/
	for d in $(sort $(patsubst src/%/,%,$(dir $(LIB_HDR)))); do \
	    install -d $(DESTDIR)$(INCDIR)/exa/$$d || exit 1; done
	for h in $(LIB_HDR); do \
	    install -m 0644 $$h $(DESTDIR)$(INCDIR)/exa/$${h#src/} || exit 1; done
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man7 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 $(BUILDDIR)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(BUILDDIR)/man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 0644 $(BUILDDIR)/exa.bash-completion \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/exa

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) \
    $(wildcard build/fuzz/obj/src/*/*.d) $(PIC_OBJ:.o=.d)
