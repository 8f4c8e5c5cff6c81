# SPDX-License-Identifier: Apache-2.0
# vramfit - GNU Makefile. `make test` and `make run` install what is missing first.
#
#   make            build build/vramfit and build/libvramfit.a
#   make run        build, then serve the web page and API on the embedded catalog
#                   (http://127.0.0.1:8077/; LISTEN=127.0.0.1:0 picks a free port)
#   make test       build, run unit + golden tests; ends with "N passed, N failed"
#   make lint       clang-format, cppcheck, the layers (tools/layers.sh), function length
#   make bench      time whole-process estimate/pick (bench/speed.sh)
#   make bench-inspect   inspect vs the @huggingface/gguf parser (npm)
#   make bench-peer      GGUF weight bytes vs real llama.cpp (npm node-llama-cpp)
#   make bench-accuracy  engine estimates vs real llama.cpp and measured vLLM/Ollama logs
#   make bench-speed     tokens/s vs public llama.cpp, TensorRT-LLM and Ollama measurements;
#                        images, video, training and offload vs public xDiT/torchtune rows
#   make SAN=address,undefined test   the same under sanitizers
#   make install    the binaries, libvramfit.so/.a, vramfit.h, vramfit.pc, man pages and
#                   completions under PREFIX (default /usr/local); DESTDIR, BINDIR, LIBDIR,
#                   INCLUDEDIR, MANDIR honoured; make uninstall removes them
#   make deb        a Debian package (debian/) in build/deb/

CC      ?= cc
PKGS    := jansson libcurl libmicrohttpd
DEB_PKGS := build-essential pkg-config libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev curl \
            libcmocka-dev libncurses-dev clang-format cppcheck clang libclang-rt-14-dev tmux \
            libxml2-utils prometheus python3-jsonschema python3-yaml
B       := build
VERSION := $(shell sed -n 's/^\#define VF_VERSION "\(.*\)"/\1/p' include/vramfit.h)
SOVERSION := 0
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2 -Wno-format-truncation -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L $(CPPFLAGS) $(WARN) -Iinclude -Isrc/lib
# every object's header dependencies, written beside it (.d) and read below
DEPFLAGS = -MMD -MP
ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SAN)
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl is loaded with dlopen by hub.c (linking it costs ~12 ms per process start) and
# libmicrohttpd by the server (src/server/serve.c): the binary links jansson alone
PKG_LIBS   = $(shell pkg-config --libs jansson 2>/dev/null)
# the CLI links libjansson.a (from libjansson-dev) into itself: loading and relocating the
# shared library cost each start ~0.04 ms, 3 % of a catalog estimate (issue 15, bench/README.md)
CLI_LIBS   = -Wl,-Bstatic $(PKG_LIBS) -Wl,-Bdynamic
TEST_LIBS  = $(shell pkg-config --libs $(PKGS) cmocka 2>/dev/null)
# ncurses is dlopen()ed by `vramfit top` (src/cli/cmd_top.c): linking it cost every process
# ~0.25 ms of loading (issue 15); its header alone is needed to build

LIB_SRC  := $(wildcard src/lib/*/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
SRV_SRC  := $(wildcard src/server/*.c)
SRV_OBJ  := $(SRV_SRC:src/server/%.c=$(B)/server/%.o) $(B)/server/web_assets.o
WEB      := $(shell find web -type f 2>/dev/null | LC_ALL=C sort)
LIB_OBJ  := $(LIB_SRC:src/lib/%.c=$(B)/lib/%.o) $(B)/lib/embedded_data.o
CLI_OBJ  := $(CLI_SRC:src/cli/%.c=$(B)/cli/%.o)
UNIT_SRC := $(wildcard tests/unit/t_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
STUBS    := $(foreach v,V1 V2 V3 CC,$(B)/tests/stub_nvml_$(v).so)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_OBJ := $(LIB_SRC:src/lib/%.c=$(B)/fuzz/obj/%.o) $(B)/fuzz/obj/embedded_data.o
FUZZ_CFLAGS := -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc/lib \
               -fsanitize=fuzzer-no-link,address,undefined
FUZZ_SECONDS ?= 120
DATA     := $(shell find data -type f \( -name '*.tsv' -o -name '*.json' \) 2>/dev/null | LC_ALL=C sort)

.PHONY: all deps run test unit golden lint fmt bench bench-speed bench-inspect bench-peer bench-accuracy bench-serve clean fuzz fuzz-smoke \
        install uninstall man deb FORCE
# keep intermediate objects (fuzz objects are only prerequisites of the fuzz targets)
.SECONDARY:
all: deps-quiet $(B)/vramfit $(B)/vramfit-serve $(B)/libvramfit.so

# --- dependencies: Debian packages, installed when we are root -----------------
# VRAMFIT_NO_DEPS=1: a package or container build, whose own build dependencies are set
deps:
	@[ "$(VRAMFIT_NO_DEPS)" = 1 ] || sh tools/deps.sh $(DEB_PKGS)
deps-quiet:
	@[ "$(VRAMFIT_NO_DEPS)" = 1 ] || sh tools/deps.sh --quiet $(DEB_PKGS)

# --- embedded catalog ----------------------------------------------------------
$(B)/embed: tools/embed.c | $(B)
	$(CC) -O1 -std=c11 -Wall -Wextra -Werror -o $@ $<
$(B)/lib/embedded_data.c: $(B)/embed $(DATA) | $(B)/lib
	$(B)/embed data $(DATA) > $@.tmp && mv $@.tmp $@
$(B)/lib/embedded_data.o: $(B)/lib/embedded_data.c
	$(CC) $(CFLAGS) -Wno-missing-prototypes -c -o $@ $<

# --- library, CLI and server ------------------------------------------------------
# position-independent: the same objects make libvramfit.a and libvramfit.so
$(B)/lib/%.o: src/lib/%.c | $(B)/lib
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC $(DEPFLAGS) $(PKG_CFLAGS) -c -o $@ $<
$(B)/libvramfit.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
# the shared library exports the public vf_* names only (tools/libvramfit.map)
$(B)/libvramfit.so.$(VERSION): $(LIB_OBJ) tools/libvramfit.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libvramfit.so.$(SOVERSION) \
	  -Wl,--version-script=tools/libvramfit.map -o $@ $(LIB_OBJ) $(PKG_LIBS) -ldl -lpthread -lm
$(B)/libvramfit.so: $(B)/libvramfit.so.$(VERSION)
	ln -sf libvramfit.so.$(VERSION) $(B)/libvramfit.so.$(SOVERSION) && ln -sf libvramfit.so.$(SOVERSION) $@
# --version: the commit and the catalog's date, rewritten only when they change
$(B)/version.h: FORCE | $(B)
	@sh tools/version.sh > $@.tmp && { cmp -s $@.tmp $@ || mv $@.tmp $@; }; rm -f $@.tmp
$(B)/cli/main.o $(B)/cli/cmd_doc.o: $(B)/version.h
FORCE:
# the CLI sees include/vramfit.h and its own header only
$(B)/cli/%.o: src/cli/%.c | $(B)/cli
	$(CC) $(CFLAGS:-Isrc/lib=) -I$(B) $(DEPFLAGS) -c -o $@ $<
# the server: a program of its own (vramfit serve runs it) linking the library and no CLI
# object; libmicrohttpd's header for its types, the library itself is dlopen()ed
$(B)/server/%.o: src/server/%.c | $(B)/server
	$(CC) $(CFLAGS:-Isrc/lib=) -I$(B) $(DEPFLAGS) $(PKG_CFLAGS) -c -o $@ $<
$(B)/server/exporter.o: $(B)/version.h
$(B)/server/web_assets.c: $(B)/embed $(WEB) | $(B)/server
	$(B)/embed -n web_files -i server.h -p srv_ web $(WEB) > $@.tmp && mv $@.tmp $@
$(B)/server/web_assets.o: $(B)/server/web_assets.c
	$(CC) $(CFLAGS:-Isrc/lib=) -Isrc/server -Wno-missing-prototypes -c -o $@ $<
# no libm: the library takes its one power and its one rounding itself (core/util.c), and
# loading libm.so cost every process ~24k instructions of the dynamic linker (issue 15); a
# libm call creeping back in fails this link
$(B)/vramfit: $(CLI_OBJ) $(B)/libvramfit.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libvramfit.a $(CLI_LIBS) -lpthread
$(B)/vramfit-serve: $(SRV_OBJ) $(B)/libvramfit.a
	$(CC) $(LDFLAGS) -o $@ $(SRV_OBJ) $(B)/libvramfit.a $(PKG_LIBS) -ldl -lpthread -lm

-include $(wildcard $(B)/lib/*/*.d $(B)/cli/*.d $(B)/server/*.d $(B)/tests/*.d $(B)/fuzz/obj/*/*.d)

# --- tests ---------------------------------------------------------------------
$(B)/tests/t_%: tests/unit/t_%.c $(B)/libvramfit.a | $(B)/tests
	$(CC) $(CFLAGS) $(DEPFLAGS) $(PKG_CFLAGS) -Wno-missing-prototypes -o $@ $< $(B)/libvramfit.a \
	  $(TEST_LIBS) -lm

# the allocation-failure test runs the CLI's commands in-process: it links the CLI's objects
# (all but main.o) with the library
CLI_CMD_OBJ := $(filter-out $(B)/cli/main.o,$(CLI_OBJ))
$(B)/tests/t_allocfail: tests/unit/t_allocfail.c $(CLI_CMD_OBJ) $(B)/libvramfit.a | $(B)/tests
	$(CC) $(CFLAGS) $(DEPFLAGS) -Wno-missing-prototypes -o $@ $< $(CLI_CMD_OBJ) $(B)/libvramfit.a \
	  $(TEST_LIBS) -lm

test: deps $(B)/vramfit $(B)/vramfit-serve $(B)/libvramfit.so $(B)/tests/httpload $(UNIT_BIN) \
    $(FUZZ_BIN) $(STUBS)
	@SAN="$(SAN)" sh tests/run.sh $(B) $(UNIT_BIN)
unit: $(UNIT_BIN)
	@sh tests/run.sh --unit-only $(B) $(UNIT_BIN)
golden: $(B)/vramfit $(B)/vramfit-serve
	@sh tests/run.sh --golden-only $(B)
golden-update: $(B)/vramfit
	@sh tests/golden/run.sh --update $(B)/vramfit

# a keep-alive HTTP client for the server's memory test (tests/http/rss.sh)
$(B)/tests/httpload: tests/helpers/httpload.c | $(B)/tests
	$(CC) -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -o $@ $<

# the stub libnvidia-ml.so in four symbol sets, for t_gpu (the real dlopen path, no GPU)
$(B)/tests/stub_nvml_%.so: tests/helpers/stub_nvml.c | $(B)/tests
	$(CC) -O1 -std=c11 -Wall -Wextra -Werror -shared -fPIC -DSTUB_$* -o $@ $<
$(B)/tests/t_gpu: $(STUBS)

# --- fuzzing: libFuzzer + ASan/UBSan; `make test` runs each target briefly -------------
$(B)/fuzz/obj/%.o: src/lib/%.c | $(B)/fuzz/obj
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(DEPFLAGS) $(PKG_CFLAGS) -c -o $@ $<
$(B)/fuzz/obj/embedded_data.o: $(B)/lib/embedded_data.c | $(B)/fuzz/obj
	clang $(FUZZ_CFLAGS) -c -o $@ $<
$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< $(FUZZ_OBJ) $(PKG_LIBS) -ldl -lm
# the server's routes (api.c) linked into their target; the hub and NVML targets load stand-in
# libcurl and libnvidia-ml libraries (tests/fuzz/stub_*.c) fed from the input, built beside them
$(B)/fuzz/fuzz_http: tests/fuzz/fuzz_http.c tests/fuzz/fuzz.h src/server/api.c src/server/exporter.c \
    src/server/server.h $(B)/version.h $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -I$(B) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< src/server/api.c \
	  src/server/exporter.c $(FUZZ_OBJ) $(PKG_LIBS) -ldl -lm -lpthread
$(B)/fuzz/stub_%.so: tests/fuzz/stub_%.c | $(B)/fuzz/obj
	clang -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror $(PKG_CFLAGS) -shared \
	  -fPIC -o $@ $<
$(B)/fuzz/fuzz_hub: $(B)/fuzz/stub_curl.so
$(B)/fuzz/fuzz_nvml: $(B)/fuzz/stub_nvml.so
fuzz: deps $(FUZZ_BIN)
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)
fuzz-smoke: deps $(FUZZ_BIN)
	@sh tests/fuzz/run.sh 5 $(FUZZ_BIN)

run: deps $(B)/vramfit $(B)/vramfit-serve
	$(B)/vramfit serve $(if $(LISTEN),--listen $(LISTEN))

bench: deps $(B)/vramfit
	@sh bench/speed.sh $(B)/vramfit
# tokens/s of the throughput model vs every public LLM row (issue 23, docs/FORMULAS.md F-SPD)
bench-speed: $(B)/vramfit
	@python3 bench/accuracy-speed.py $(B)/vramfit ../shared/reference/measured-speed-public.jsonl
	@python3 bench/accuracy-speed-kinds.py $(B)/vramfit ../shared/reference/measured-speed-public.jsonl
bench-serve: deps $(B)/vramfit $(B)/vramfit-serve
	@command -v wrk >/dev/null 2>&1 || sh tools/deps.sh wrk
	@sh bench/serve.sh $(B)/vramfit
bench-inspect: deps $(B)/vramfit
	@sh bench/inspect.sh $(B)/vramfit
bench-peer: deps $(B)/vramfit
	@sh bench/peer-gguf.sh $(B)/vramfit
bench-accuracy: deps $(B)/vramfit $(B)/tests/t_vllm $(B)/tests/t_ollama
	@sh bench/accuracy.sh $(B)/vramfit

# --- install -------------------------------------------------------------------
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
COMMANDS   := estimate pick inspect catalog explain serve smi top run exporter help
MANPAGES   := $(B)/man/vramfit.1 $(COMMANDS:%=$(B)/man/vramfit-%.1)
# the man pages are what `vramfit help` prints (and the option table), as roff
$(B)/man/vramfit.1: $(B)/vramfit
	@mkdir -p $(@D)
	$(B)/vramfit help --man > $@.tmp && mv $@.tmp $@
$(B)/man/vramfit-%.1: $(B)/vramfit
	@mkdir -p $(@D)
	$(B)/vramfit help --man $* > $@.tmp && mv $@.tmp $@
$(B)/vramfit.pc: tools/vramfit.pc.in include/vramfit.h
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  -e 's|@VERSION@|$(VERSION)|' $< > $@
man: $(MANPAGES)
install: $(B)/vramfit $(B)/vramfit-serve $(B)/libvramfit.so $(B)/libvramfit.a $(B)/vramfit.pc \
    $(MANPAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DATADIR)/bash-completion/completions \
	  $(DESTDIR)$(DATADIR)/zsh/site-functions $(DESTDIR)$(DATADIR)/fish/vendor_completions.d \
	  $(DESTDIR)$(UNITDIR)
	install -m 755 $(B)/vramfit $(B)/vramfit-serve $(DESTDIR)$(BINDIR)/
	install -m 644 $(B)/libvramfit.so.$(VERSION) $(B)/libvramfit.a $(DESTDIR)$(LIBDIR)/
	ln -sf libvramfit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libvramfit.so.$(SOVERSION)
	ln -sf libvramfit.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libvramfit.so
	install -m 644 include/vramfit.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(B)/vramfit.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completions/vramfit.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/vramfit
	install -m 644 completions/_vramfit $(DESTDIR)$(DATADIR)/zsh/site-functions/_vramfit
	install -m 644 completions/vramfit.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/vramfit.fish
	sed 's|/usr/bin/vramfit|$(BINDIR)/vramfit|' contrib/vramfit.service > $(DESTDIR)$(UNITDIR)/vramfit.service
	chmod 644 $(DESTDIR)$(UNITDIR)/vramfit.service
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/vramfit $(DESTDIR)$(BINDIR)/vramfit-serve \
	  $(DESTDIR)$(LIBDIR)/libvramfit.so $(DESTDIR)$(LIBDIR)/libvramfit.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libvramfit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libvramfit.a \
	  $(DESTDIR)$(INCLUDEDIR)/vramfit.h $(DESTDIR)$(LIBDIR)/pkgconfig/vramfit.pc \
	  $(MANPAGES:$(B)/man/%=$(DESTDIR)$(MANDIR)/man1/%) \
	  $(DESTDIR)$(DATADIR)/bash-completion/completions/vramfit \
	  $(DESTDIR)$(DATADIR)/zsh/site-functions/_vramfit \
	  $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/vramfit.fish \
	  $(DESTDIR)$(UNITDIR)/vramfit.service

# the Debian packages (debian/), built from a copy of the tracked files in $(B)/deb/src, so
# that dpkg-buildpackage writes its .deb files into $(B)/deb and nothing into the tree
DEB_TOOLS := debhelper dpkg-dev fakeroot lintian
deb:
	@[ "$(VRAMFIT_NO_DEPS)" = 1 ] || sh tools/deps.sh $(DEB_TOOLS) $(DEB_PKGS)
	rm -rf $(B)/deb && mkdir -p $(B)/deb/src
	git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - | tar -xf - -C $(B)/deb/src
	cd $(B)/deb/src && dpkg-buildpackage -us -uc -b -j2 >../build.log 2>&1 || \
	  { tail -30 ../build.log; exit 1; }
	ls $(B)/deb/*.deb

# --- lint ----------------------------------------------------------------------
SRC_ALL := $(wildcard include/*.h src/*/*.c src/*/*.h src/lib/*/*.c src/lib/*/*.h tools/*.c tests/unit/*.c tests/unit/*.h \
             tests/helpers/*.c tests/fuzz/*.c tests/fuzz/*.h bench/*.c)
# layers.sh: calls (nm on the objects) and includes go one way down; funclen.py: no function
# over 120 lines (issue 15)
lint: deps $(B)/libvramfit.a
	@clang-format --dry-run --Werror $(SRC_ALL) && echo "clang-format: ok"
	@missing=$$(grep -L 'SPDX-License-Identifier: Apache-2.0' $(SRC_ALL) $(wildcard tools/*.sh tools/*.py \
	  tests/*.sh tests/*/*.sh bench/*.sh completions/* contrib/*)); \
	  if [ -n "$$missing" ]; then echo "spdx: no SPDX-License-Identifier in: $$missing"; exit 1; fi; \
	  echo "spdx: ok (every source names its licence)"
	@sh tools/layers.sh $(B)
	@python3 tools/funclen.py
	@cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
	  --suppress=missingIncludeSystem --inline-suppr -Iinclude -Isrc/lib src tools && echo "cppcheck: ok"
fmt:
	clang-format -i $(SRC_ALL)

$(B) $(B)/lib $(B)/cli $(B)/server $(B)/tests $(B)/fuzz/obj:
	@mkdir -p $@
clean:
	rm -rf $(B)
