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
#   make SAN=address,undefined test   the same under sanitizers

CC      ?= cc
PKGS    := jansson libcurl libmicrohttpd
DEB_PKGS := build-essential pkg-config libjansson-dev libcurl4-openssl-dev libmicrohttpd-dev curl \
            libcmocka-dev libncurses-dev clang-format cppcheck clang libclang-rt-14-dev tmux \
            libxml2-utils
B       := build
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2 -Wno-format-truncation -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) -Iinclude -Isrc/lib
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

.PHONY: all deps run test unit golden lint fmt bench bench-inspect bench-peer bench-accuracy bench-serve clean fuzz fuzz-smoke
# keep intermediate objects (fuzz objects are only prerequisites of the fuzz targets)
.SECONDARY:
all: deps-quiet $(B)/vramfit $(B)/vramfit-serve

# --- dependencies: Debian packages, installed when we are root -----------------
deps:
	@sh tools/deps.sh $(DEB_PKGS)
deps-quiet:
	@sh tools/deps.sh --quiet $(DEB_PKGS)

# --- embedded catalog ----------------------------------------------------------
$(B)/embed: tools/embed.c | $(B)
	$(CC) -O1 -std=c11 -Wall -Wextra -Werror -o $@ $<
$(B)/lib/embedded_data.c: $(B)/embed $(DATA) | $(B)/lib
	$(B)/embed data $(DATA) > $@.tmp && mv $@.tmp $@
$(B)/lib/embedded_data.o: $(B)/lib/embedded_data.c
	$(CC) $(CFLAGS) -Wno-missing-prototypes -c -o $@ $<

# --- library, CLI and server ------------------------------------------------------
$(B)/lib/%.o: src/lib/%.c | $(B)/lib
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(PKG_CFLAGS) -c -o $@ $<
$(B)/libvramfit.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
# the CLI sees include/vramfit.h and its own header only
$(B)/cli/%.o: src/cli/%.c | $(B)/cli
	$(CC) $(CFLAGS:-Isrc/lib=) $(DEPFLAGS) -c -o $@ $<
# the server: a program of its own (vramfit serve runs it) linking the library and no CLI
# object; libmicrohttpd's header for its types, the library itself is dlopen()ed
$(B)/server/%.o: src/server/%.c | $(B)/server
	$(CC) $(CFLAGS:-Isrc/lib=) $(DEPFLAGS) $(PKG_CFLAGS) -c -o $@ $<
$(B)/server/web_assets.c: $(B)/embed $(WEB) | $(B)/server
	$(B)/embed -n web_files -i server.h -p srv_ web $(WEB) > $@.tmp && mv $@.tmp $@
$(B)/server/web_assets.o: $(B)/server/web_assets.c
	$(CC) $(CFLAGS:-Isrc/lib=) -Isrc/server -Wno-missing-prototypes -c -o $@ $<
$(B)/vramfit: $(CLI_OBJ) $(B)/libvramfit.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libvramfit.a $(CLI_LIBS) -lpthread -lm
$(B)/vramfit-serve: $(SRV_OBJ) $(B)/libvramfit.a
	$(CC) $(LDFLAGS) -o $@ $(SRV_OBJ) $(B)/libvramfit.a $(PKG_LIBS) -ldl -lpthread -lm

-include $(wildcard $(B)/lib/*/*.d $(B)/cli/*.d $(B)/server/*.d $(B)/tests/*.d $(B)/fuzz/obj/*/*.d)

# --- tests ---------------------------------------------------------------------
$(B)/tests/t_%: tests/unit/t_%.c $(B)/libvramfit.a | $(B)/tests
	$(CC) $(CFLAGS) $(DEPFLAGS) $(PKG_CFLAGS) -Wno-missing-prototypes -o $@ $< $(B)/libvramfit.a \
	  $(TEST_LIBS) -lm

test: deps $(B)/vramfit $(B)/vramfit-serve $(B)/tests/httpload $(UNIT_BIN) $(FUZZ_BIN) $(STUBS)
	@sh tests/run.sh $(B) $(UNIT_BIN)
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
$(B)/fuzz/fuzz_http: tests/fuzz/fuzz_http.c tests/fuzz/fuzz.h src/server/api.c src/server/server.h $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< src/server/api.c $(FUZZ_OBJ) \
	  $(PKG_LIBS) -ldl -lm
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
bench-serve: deps $(B)/vramfit $(B)/vramfit-serve
	@command -v wrk >/dev/null 2>&1 || sh tools/deps.sh wrk
	@sh bench/serve.sh $(B)/vramfit
bench-inspect: deps $(B)/vramfit
	@sh bench/inspect.sh $(B)/vramfit
bench-peer: deps $(B)/vramfit
	@sh bench/peer-gguf.sh $(B)/vramfit
bench-accuracy: deps $(B)/vramfit $(B)/tests/t_vllm $(B)/tests/t_ollama
	@sh bench/accuracy.sh $(B)/vramfit

# --- lint ----------------------------------------------------------------------
SRC_ALL := $(wildcard include/*.h src/*/*.c src/*/*.h src/lib/*/*.c src/lib/*/*.h tools/*.c tests/unit/*.c tests/unit/*.h \
             tests/helpers/*.c tests/fuzz/*.c tests/fuzz/*.h bench/*.c)
# layers.sh: calls (nm on the objects) and includes go one way down; funclen.py: no function
# over 120 lines (issue 15)
lint: deps $(B)/libvramfit.a
	@clang-format --dry-run --Werror $(SRC_ALL) && echo "clang-format: ok"
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
