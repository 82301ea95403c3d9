# exa - one non-recursive GNU Makefile.
#
#   make            build build/exa
#   make run        install missing Debian packages, build, run the main job
#   make check      install test dependencies, build, run every test, then
#                   the suite again under ASan+UBSan
#   make check-unit / check-integration / sanitize / fuzz / bench / fmt
#   make install    PREFIX=/usr/local
#
# Sources are found by wildcard: a new src/lib<name>/<file>.c joins libexa.a,
# a new tests/unit/test_<name>.c becomes a test binary, with no edit here.

BUILDDIR ?= build
PREFIX   ?= /usr/local
CC       ?= cc
SAN      ?=

PKGS     := jansson sqlite3 yaml-0.1 libmicrohttpd libcurl libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
            -Wstrict-prototypes -Wmissing-prototypes
OPT      ?= -O2 -g
CPPFLAGS += -Isrc -include src/libutil/banned.h \
            -DEXA_VERSION='"$(VERSION)"' \
            -DEXA_DATADIR='"$(PREFIX)/share/exa"' \
            -DEXA_SRCDIR='"$(CURDIR)"'
CFLAGS   += $(CSTD) $(WARN) $(OPT) $(PKG_CFLAGS) -MMD -MP
LDLIBS   += $(PKG_LIBS) -lxgboost -lm -lpthread

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
UNIT_OBJ := $(UNIT_HELPERS:%.c=$(BUILDDIR)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILDDIR)/tests/%)
LIBEXA   := $(BUILDDIR)/libexa.a
EXA      := $(BUILDDIR)/exa

.SECONDARY:
.PHONY: all run check check-unit check-integration sanitize fuzz bench \
        fmt install deps test-deps clean
all: $(EXA)

$(BUILDDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBEXA): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(EXA): $(CMD_OBJ) $(LIBEXA)
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJ) $(LIBEXA) $(LDLIBS)

$(BUILDDIR)/tests/%: tests/unit/%.c $(UNIT_OBJ) $(LIBEXA)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< \
	    $(UNIT_OBJ) $(LIBEXA) $(LDLIBS) -lcmocka

deps:
	@scripts/install-deps.sh build

test-deps:
	@scripts/install-deps.sh test

# The main job on the embedded default: SQLite + the mock scheduler.
run: deps
	@$(MAKE) --no-print-directory all
	$(EXA) pipeline run --model JPCP --dataset PM100Dataset --dummy \
	    --dataset-path data/pm100-sample.csv

# The testbed is started once for both passes (scripts/check.sh).
check: test-deps
	@scripts/check.sh

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
build/fuzz/%: fuzz/%.c $(LIB_SRC)
	@mkdir -p build/fuzz/obj
	clang $(CSTD) -Isrc -include src/libutil/banned.h $(PKG_CFLAGS) \
	    -DEXA_VERSION='"$(VERSION)"' -DEXA_DATADIR='""' -DEXA_SRCDIR='""' \
	    -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRC) \
	    $(LDLIBS)
fuzz: $(FUZZ_BIN)
	@scripts/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

bench: $(EXA)
	@EXA=$(abspath $(EXA)) scripts/run-bench.sh

fmt:
	clang-format -i $(LIB_SRC) $(CMD_SRC) $(wildcard src/*/*.h) \
	    $(UNIT_SRC) $(FUZZ_SRC)

install: $(EXA)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/exa
	install -m 0755 $(EXA) $(DESTDIR)$(PREFIX)/bin/exa
	install -m 0644 data/pm100-sample.csv $(DESTDIR)$(PREFIX)/share/exa/

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(UNIT_OBJ:.o=.d)
