# Makefile: builds libautotune (static and shared), the autotune command and
# the tests; `make test` runs them, `make bench` benchmarks on a GPU,
# `make install PREFIX=... DESTDIR=...` installs with a pkg-config file.

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
CC        ?= cc
NVCC      ?= $(CUDA_HOME)/bin/nvcc
BUILD     ?= build
VERSION   := 0.1.0

# Where SQLite comes from; `make SQLITE_LIBS=/usr/lib/x86_64-linux-gnu/libsqlite3.a`
# links it statically for machines without libsqlite3.so.
SQLITE_LIBS ?= -lsqlite3

OPT      ?= -O2 -g
CFLAGS   += $(OPT) -std=c11 -Wall -Wextra -fPIC -pthread \
            -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
            -Iruntime -Idriver -Itemplates -Idb -Ireports -Ituner \
            -I$(CUDA_HOME)/include -I$(BUILD)/gen
CUDA_LIB := $(CUDA_HOME)/lib64
LDLIBS   += -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lnvrtc $(SQLITE_LIBS) -ldl -lpthread -lm

LIB_SRC  := $(wildcard driver/*.c templates/*.c db/*.c runtime/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/sources.o
TOOL_SRC := $(wildcard tuner/*.c reports/*.c)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c) tests/harness.c $(wildcard tests/th_*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
# Test-only families (a configuration that crashes, one that hangs) live in
# tests/families/ and are linked into the test programs only.
TESTFAM_CU  := $(wildcard tests/families/*.cu)
TESTFAM_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/families/*.c)) $(BUILD)/gen/test_sources.o
CU_SRC   := $(wildcard templates/*.cu)

STATIC   := $(BUILD)/libautotune.a
SHARED   := $(BUILD)/libautotune.so
TOOL     := $(BUILD)/autotune
TESTS    := $(BUILD)/run_tests
TEST_TOOL := $(BUILD)/autotune-test

.PHONY: all test check layers bench install uninstall clean
all: $(STATIC) $(SHARED) $(TOOL) $(BUILD)/autotune.pc

# The CUB side of the vendor baselines (templates/vendor/cub_reduce.cu), built
# where nvcc is present; the worker dlopens it beside the autotune binary.
# `make VENDOR_LIB=` skips it (the report then says "CUB not found").
VENDOR_LIB ?= $(if $(wildcard $(NVCC)),$(BUILD)/libautotune_vendor.so)
VENDOR_NVCCFLAGS ?= -O3 -std=c++17 -shared -Xcompiler -fPIC \
    -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
    -gencode arch=compute_90,code=compute_90
all: $(VENDOR_LIB)
$(BUILD)/libautotune_vendor.so: templates/vendor/cub_reduce.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(VENDOR_NVCCFLAGS) -o $@ $<

$(BUILD)/%.o: %.c $(wildcard runtime/*.h driver/*.h templates/*.h db/*.h reports/*.h tuner/*.h tests/*.h) | $(BUILD)/gen/sources.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# Kernel sources are embedded in the library: no file lookups at run time.
$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -std=c11 -Wall -Wextra $< -o $@
$(BUILD)/gen/sources.c: $(BUILD)/tools/embed $(CU_SRC)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ $(CU_SRC)
$(BUILD)/gen/sources.o: $(BUILD)/gen/sources.c
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/gen/test_sources.c: $(BUILD)/tools/embed $(TESTFAM_CU)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed --symbol th_families_source_text $@ $(TESTFAM_CU)
$(BUILD)/gen/test_sources.o: $(BUILD)/gen/test_sources.c
	$(CC) $(CFLAGS) -c $< -o $@

# The folder where a shipped read-only tuning database is looked for
# (runtime/api.c: PREFIX/share/autotune/tuning.db, unless $AUTOTUNE_SHIPPED_DB).
# `make install` builds it there from SHIPPED_JSON (the configurations of
# `autotune export --configs-only --shipped`, compiled by `autotune ship-build`
# with NVRTC: no GPU needed); without that file no shipped database is installed.
SHIPPED_JSON ?= share/hopper.json
$(BUILD)/runtime/api.o: CFLAGS += -DAT_SHARE_DIR='"$(PREFIX)/share/autotune"'

$(STATIC): $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^
$(SHARED): $(LIB_OBJ) runtime/libautotune.map
	$(CC) -shared -Wl,-soname,libautotune.so.0 -Wl,--version-script=runtime/libautotune.map \
	    -o $@ $(LIB_OBJ) $(LDLIBS)
$(TOOL): $(TOOL_OBJ) $(STATIC)
	$(CC) -o $@ $(TOOL_OBJ) $(STATIC) $(LDLIBS)
$(TEST_TOOL): $(TOOL_OBJ) $(TESTFAM_OBJ) $(STATIC)
	$(CC) -o $@ $(TOOL_OBJ) $(TESTFAM_OBJ) $(STATIC) $(LDLIBS)
$(TESTS): $(TEST_OBJ) $(filter-out $(BUILD)/tuner/main.o,$(TOOL_OBJ)) $(TESTFAM_OBJ) $(STATIC) $(TOOL) $(TEST_TOOL)
	$(CC) -o $@ $(TEST_OBJ) $(filter-out $(BUILD)/tuner/main.o,$(TOOL_OBJ)) $(TESTFAM_OBJ) $(STATIC) $(LDLIBS)

# The fake CUDA driver of the host-path tests (tests/fakecuda/: no GPU, every call counted;
# tests/th_fakegpu.h runs a test in a child run_tests that loads it).
FAKECUDA := $(BUILD)/libfakecuda.so
$(FAKECUDA): tests/fakecuda/fakecuda.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -std=c11 -Wall -Wextra -fPIC -shared -I$(CUDA_HOME)/include $< -o $@
$(TESTS): $(FAKECUDA)

# The MPI front end (tuner/mpi/): built where mpicc exists, by `all` and
# `make mpi`; autotune-mpi-test also has the test families (tests/test_mpi.c).
MPICC ?= $(shell command -v mpicc 2>/dev/null)
MPI_TOOL := $(BUILD)/autotune-mpi
MPI_TEST_TOOL := $(BUILD)/autotune-mpi-test
.PHONY: mpi
ifneq ($(MPICC),)
all: $(MPI_TOOL)
$(TESTS): $(MPI_TEST_TOOL)
mpi: $(MPI_TOOL) $(MPI_TEST_TOOL)
else
mpi:
	@echo "make mpi: no mpicc here (apt-get install libopenmpi-dev openmpi-bin)"; exit 1
endif
$(BUILD)/tuner/mpi/autotune_mpi.o: tuner/mpi/autotune_mpi.c $(wildcard runtime/*.h driver/*.h templates/*.h db/*.h tuner/*.h) | $(BUILD)/gen/sources.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@
$(MPI_TOOL): $(BUILD)/tuner/mpi/autotune_mpi.o $(filter-out $(BUILD)/tuner/main.o,$(TOOL_OBJ)) $(STATIC)
	$(MPICC) -o $@ $^ $(LDLIBS)
$(MPI_TEST_TOOL): $(BUILD)/tuner/mpi/autotune_mpi.o $(filter-out $(BUILD)/tuner/main.o,$(TOOL_OBJ)) $(TESTFAM_OBJ) $(STATIC)
	$(MPICC) -o $@ $^ $(LDLIBS)

# Libs spells the rpath `-Xlinker -rpath=DIR`, which both cc and nvcc accept
# (nvcc rejects -Wl,...).
PC_TEXT = 'prefix=%s\nexec_prefix=$${prefix}\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\ncudadir=%s\n\nName: autotune\nDescription: tuned CUDA kernels (matmul, sum, dot, Jacobi) from a tuning database\nVersion: %s\nCflags: -I$${includedir} -I$${cudadir}/include\nLibs: -L$${libdir} -Xlinker -rpath=$${libdir} -lautotune\nLibs.private: -L$${cudadir}/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm\n'
$(BUILD)/autotune.pc: Makefile
	@mkdir -p $(BUILD)
	printf $(PC_TEXT) '$(PREFIX)' '$(CUDA_HOME)' '$(VERSION)' > $@

# The README's test command: CPU tier always, GPU tier where a GPU is present.
test: all $(TESTS)
	AUTOTUNE_BUILD=$(BUILD) CUDA_HOME='$(CUDA_HOME)' ./$(TESTS)

# Compare the pruned walk of every large space with a plain scan of all of it
# on every nominal device (tests/test_enum.c; `make test` scans the subtrees
# around what the walk found), then compile every configuration of every
# family for sm_80 and sm_90 (no GPU needed; `make test` compiles a
# stratified sample of them).
check: $(TOOL) $(TESTS)
	AUTOTUNE_ENUM_FULL=1 AUTOTUNE_BUILD=$(BUILD) CUDA_HOME='$(CUDA_HOME)' ./$(TESTS) enum_walk_equals_plain_scan
	./$(TOOL) check --arch sm_80
	./$(TOOL) check --arch sm_90

# No #include from a lower layer to a higher one (tools/layers.txt); the CPU
# test tests/test_layers.c includes the same checker.
$(BUILD)/tools/layers: tools/layers.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L $< -o $@
# No call cycle among the tuner's files (tools/calls.c; docs/tuner.md).
$(BUILD)/tools/calls: tools/calls.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L $< -o $@
layers: $(BUILD)/tools/layers $(BUILD)/tools/calls
	$(BUILD)/tools/layers -s $(BUILD) .
	$(BUILD)/tools/calls tuner
$(BUILD)/tests/test_layers.o: tools/layers.c tools/calls.c

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/autotune
	if [ -x $(MPI_TOOL) ]; then install -m 755 $(MPI_TOOL) $(DESTDIR)$(PREFIX)/bin/autotune-mpi; fi
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/libautotune.a
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/libautotune.so.$(VERSION)
	ln -sf libautotune.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libautotune.so.0
	ln -sf libautotune.so.0 $(DESTDIR)$(PREFIX)/lib/libautotune.so
	install -m 644 runtime/autotune.h $(DESTDIR)$(PREFIX)/include/autotune.h
	$(if $(VENDOR_LIB),install -m 755 $(VENDOR_LIB) $(DESTDIR)$(PREFIX)/lib/libautotune_vendor.so)
	printf $(PC_TEXT) '$(PREFIX)' '$(CUDA_HOME)' '$(VERSION)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/autotune.pc
	install -d $(DESTDIR)$(PREFIX)/share/autotune
	install -m 644 share/grid-hopper.txt $(DESTDIR)$(PREFIX)/share/autotune/grid-hopper.txt
	if [ -f '$(SHIPPED_JSON)' ]; then \
	    install -m 644 '$(SHIPPED_JSON)' $(DESTDIR)$(PREFIX)/share/autotune/shipped.json && \
	    ./$(TOOL) ship-build '$(SHIPPED_JSON)' -o $(DESTDIR)$(PREFIX)/share/autotune/tuning.db; \
	else echo "no $(SHIPPED_JSON): no shipped tuning database installed"; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/autotune $(DESTDIR)$(PREFIX)/bin/autotune-mpi $(DESTDIR)$(PREFIX)/lib/libautotune.* \
	      $(DESTDIR)$(PREFIX)/include/autotune.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/autotune.pc
	rm -f $(DESTDIR)$(PREFIX)/share/autotune/tuning.db $(DESTDIR)$(PREFIX)/share/autotune/shipped.json \
	      $(DESTDIR)$(PREFIX)/share/autotune/grid-hopper.txt

include bench/bench.mk

clean:
	rm -rf $(BUILD)
